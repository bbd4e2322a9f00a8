// Numpy broadcasting for kernels: walks an output shape with the matching element offset of each
// operand (stride 0 along broadcast dimensions), innermost dimension as a tight loop, outer
// rows in parallel.
#pragma once

#include <array>
#include <cstdint>

#include "dlc/tensor.h"

namespace dlc::cpu {

/// Element strides of `in` aligned to `out`'s rank, 0 where `in` is broadcast.
Shape broadcast_strides(const Shape& in, const Shape& out);

/// Calls row(out_offset, in_offsets, in_inner_strides, n) for each innermost row of `out`.
template <size_t K, typename Row>
void for_each_broadcast_row(const Shape& out, const std::array<const Shape*, K>& ins, Row&& row) {
  const int64_t rank = int64_t(out.size());
  std::array<Shape, K> strides;
  for (size_t k = 0; k < K; ++k) strides[k] = broadcast_strides(*ins[k], out);
  const int64_t inner = rank ? out[rank - 1] : 1;
  const int64_t rows = inner ? num_elements(out) / inner : 0;
  std::array<int64_t, K> inner_stride{};
  for (size_t k = 0; k < K; ++k) inner_stride[k] = rank ? strides[k][rank - 1] : 0;
#pragma omp parallel for schedule(static) if (rows * inner > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    std::array<int64_t, K> off{};
    int64_t rem = r;
    for (int64_t d = rank - 2; d >= 0; --d) {
      int64_t idx = rem % out[d];
      rem /= out[d];
      for (size_t k = 0; k < K; ++k) off[k] += idx * strides[k][d];
    }
    row(r * inner, off, inner_stride, inner);
  }
}

}  // namespace dlc::cpu
