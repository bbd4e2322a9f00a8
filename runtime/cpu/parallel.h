// Splitting a flat loop over the OpenMP threads in contiguous chunks. Kernels put a plain
// `#pragma omp simd` loop inside the chunk: GCC vectorizes that reliably, where a combined
// `parallel for simd` often runs its scalar fallback, and one thread opens no parallel region.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace dlc::cpu {

/// Calls chunk(begin, end) over disjoint ranges covering [0, n): once with [0, n) when n is at
/// most `serial_max` or one thread is available, else once per thread in a parallel region.
template <typename Chunk>
void parallel_chunks(int64_t n, int64_t serial_max, Chunk&& chunk) {
  if (n <= serial_max || omp_get_max_threads() == 1 || omp_in_parallel()) {
    if (n > 0) chunk(int64_t(0), n);
    return;
  }
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads(), per = (n + threads - 1) / threads;
    const int64_t begin = std::min(n, omp_get_thread_num() * per), end = std::min(n, begin + per);
    if (begin < end) chunk(begin, end);
  }
}

/// Sum reductions (ReduceSum and the fused reductions, which must add in the same order): below
/// this many input elements a reduction runs serially…
constexpr int64_t kReduceParallelWork = 32768;
/// …and a reduced extent of this many elements or more, with fewer outputs than threads, is split
/// over chunks of the extent.
constexpr int64_t kReduceSplitMin = 8192;

/// Inner positions per task of the kernels that walk an (outer, reduced, inner) view in blocks of
/// inner positions (the reductions, Softmax and its gradient): one accumulator array each.
constexpr int64_t kInnerBlock = 64;

/// Calls body(o, i0, n) for every outer index o and block [i0, i0 + n) of up to kInnerBlock inner
/// positions of an (outer, R, inner) view; in parallel when the view holds more than
/// kReduceParallelWork elements.
template <typename Body>
void for_each_inner_block(int64_t outer, int64_t R, int64_t inner, Body&& body) {
  const int64_t blocks = (inner + kInnerBlock - 1) / kInnerBlock, tasks = outer * blocks;
#pragma omp parallel for schedule(static) if (tasks > 1 && outer * R * inner > kReduceParallelWork)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / blocks, i0 = (t % blocks) * kInnerBlock;
    body(o, i0, std::min(kInnerBlock, inner - i0));
  }
}

/// How many chunks of its reduced extent `extent` a sum reduction with `outputs` results splits
/// over (partial sums per chunk, combined in chunk order), or 0 when it does not split.
inline int64_t reduce_split_chunks(int64_t outputs, int64_t extent) {
  const int64_t threads = omp_get_max_threads();
  if (threads <= 1 || outputs >= threads || extent < kReduceSplitMin) return 0;
  return std::min<int64_t>(threads, extent / (kReduceSplitMin / 2));
}

}  // namespace dlc::cpu
