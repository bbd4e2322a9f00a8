// Numpy broadcasting for kernels: walks an output shape with the matching element offset of each
// operand (stride 0 along broadcast dimensions), innermost dimension as a tight loop, outer
// rows in parallel chunks, each row's offsets stepped by a RowCounter.
#pragma once

#include <array>
#include <cstdint>

#include "dlc/tensor.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/row_counter.h"

namespace dlc::cpu {

/// Element strides of `in` aligned to `out`'s rank, 0 where `in` is broadcast.
Shape broadcast_strides(const Shape& in, const Shape& out);

/// Calls row(out_offset, in_offsets, in_inner_strides, n) for each innermost row of `out`.
template <size_t K, typename Row>
void for_each_broadcast_row(const Shape& out, const std::array<const Shape*, K>& ins, Row&& row) {
  const int64_t rank = int64_t(out.size());
  std::array<Shape, K> strides;
  std::array<const Shape*, K> stride_lists;
  for (size_t k = 0; k < K; ++k) {
    strides[k] = broadcast_strides(*ins[k], out);
    stride_lists[k] = &strides[k];
  }
  const int64_t inner = rank ? out[rank - 1] : 1;
  const int64_t rows = inner ? num_elements(out) / inner : 0;
  std::array<int64_t, K> inner_stride{};
  for (size_t k = 0; k < K; ++k) inner_stride[k] = rank ? strides[k][rank - 1] : 0;
  const Shape outer(out.begin(), out.end() - (rank ? 1 : 0));
  parallel_chunks(rows, rows * inner > 32768 ? 1 : rows, [&](int64_t r0, int64_t r1) {
    RowCounter<K> counter(outer, stride_lists, r0);
    for (int64_t r = r0; r < r1; ++r, counter.next()) row(r * inner, counter.offsets(), inner_stride, inner);
  });
}

}  // namespace dlc::cpu
