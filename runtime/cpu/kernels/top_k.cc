// CPU TopKIndices: per line along the axis, the positions of the k largest (or smallest) values,
// best first, by a partial sort of the positions; ties go to the lower position and NaN counts as
// the largest value (as torch.topk). f16 and bf16 go through f32 (exact).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

template <typename T>
void top_k(const KernelContext& ctx) {
  const TensorView& x = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  int64_t axis = ctx.attrs.i("axis", -1);
  if (axis < 0) axis += x.rank();
  const int64_t k = ctx.attrs.i("k", 1), extent = x.dims[size_t(axis)];
  const bool largest = ctx.attrs.i("largest", 1) != 0;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dims[size_t(d)];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dims[size_t(d)];
  const T* xs = x.as<T>();
  int64_t* ys = out.as<int64_t>();
  // Whether position a goes before position b of one line.
  auto before = [largest](T va, T vb, int64_t a, int64_t b) {
    const bool na = is_nan(va), nb = is_nan(vb);
    if (na || nb) return na && nb ? a < b : largest == na;
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
  };
#pragma omp parallel for schedule(static) if (x.numel() > 32768)
  for (int64_t line = 0; line < outer * inner; ++line) {
    const int64_t o = line / inner, i = line % inner;
    const T* xl = xs + o * extent * inner + i;
    std::vector<int64_t> pos(static_cast<size_t>(extent));
    std::iota(pos.begin(), pos.end(), int64_t(0));
    std::partial_sort(pos.begin(), pos.begin() + k, pos.end(),
                      [&](int64_t a, int64_t b) { return before(xl[a * inner], xl[b * inner], a, b); });
    for (int64_t j = 0; j < k; ++j) ys[(o * k + j) * inner + i] = pos[size_t(j)];
  }
}

}  // namespace

void kernel_TopKIndices(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_TopKIndices)) return;  // f16/bf16 through f32: the same order
  dispatch_numeric(ctx.inputs[0].dtype, ctx, [&](auto tag) { top_k<typename decltype(tag)::type>(ctx); });
}

}  // namespace dlc::cpu
