// How the CPU reductions fold a contiguous block of elements into an accumulator: kFoldLanes
// interleaved partial results, combined into the accumulator in lane order. The lanes are
// independent chains, so the loop vectorizes and no add waits on the one before (a single
// double accumulator ran one add per four cycles). ReduceSum and FusedReduce both fold a
// contiguous row in blocks of kFoldBlock from its start, so a fused reduction keeps the unfused
// one's bits.
#pragma once

#include <cstdint>
#include <type_traits>

namespace dlc::cpu {

constexpr int64_t kFoldLanes = 8;
constexpr int64_t kFoldBlock = 64;  // elements per fold_block call along a row

/// Folds p[0, n) into `acc` with `op` (Acc, init(), step(acc, x, k), combine(a, b); k is the
/// output index the op may read).
template <typename Op, typename T>
void fold_block(const Op& op, typename Op::Acc& acc, const T* p, int64_t n, int64_t k) {
  typename Op::Acc lane[kFoldLanes];
  for (auto& l : lane) l = op.init();
  int64_t i = 0;
  for (; i + kFoldLanes <= n; i += kFoldLanes)
    for (int64_t l = 0; l < kFoldLanes; ++l) op.step(lane[l], p[i + l], k);
  for (int64_t l = 0; i < n; ++i, ++l) op.step(lane[l], p[i], k);
  for (const auto& l : lane) acc = op.combine(acc, l);
}

/// Wide<T>: the accumulator of sums of T, double for floats and int64 for integers.
template <typename T>
using Wide = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

/// The op of a sum reduction: fin(sum of map(x) in Wide<T>, n). ReduceSum, ReduceMean, ReduceL1
/// and the others of the kind, and FusedReduce's sum, are its instances.
template <typename T, typename Map, typename Fin>
struct SumOf {
  using Acc = Wide<T>;
  Map map;
  Fin fin;
  Acc init() const { return Acc(0); }
  void step(Acc& a, T x, int64_t) const { a += map(Acc(x)); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  T finish(Acc a, int64_t n, int64_t) const { return T(fin(a, n)); }
};

template <typename T, typename Map, typename Fin>
SumOf<T, Map, Fin> sum_of(Map map, Fin fin) {
  return {map, fin};
}

inline constexpr auto kSame = [](auto a) { return a; };           // map: x itself
inline constexpr auto kAsIs = [](auto a, int64_t) { return a; };  // fin: the sum itself

}  // namespace dlc::cpu
