// Index operands (gather indices, loss targets): i32 or i64, widened and range-checked.
#pragma once

#include <vector>

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

/// The indices (i32 or i64) widened to int64; fails on another dtype, calling the operand `what`.
std::vector<int64_t> read_indices(const KernelContext& ctx, const TensorView& v,
                                  const char* what = "indices");

/// `i` in [0, bound): a negative index counts from the end; fails when out of range.
int64_t wrap_index(const KernelContext& ctx, int64_t i, int64_t bound);

/// The data offset GatherElements reads for element `p` of its indices (of dims `index_dims`):
/// p's coordinates, the one on `axis` replaced by `index` (wrapped), in the data's `strides`.
/// GatherElementsGrad adds into the same offset.
inline int64_t gather_elements_offset(int64_t p, int64_t index, const Shape& index_dims, const Shape& strides,
                                      int64_t axis) {
  int64_t off = 0, rem = p;
  for (int64_t d = int64_t(index_dims.size()) - 1; d >= 0; --d) {
    const int64_t c = rem % index_dims[size_t(d)];
    rem /= index_dims[size_t(d)];
    off += (d == axis ? index : c) * strides[size_t(d)];
  }
  return off;
}

}  // namespace dlc::cpu
