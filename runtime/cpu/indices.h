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

}  // namespace dlc::cpu
