// Softmax and log-softmax over one axis, forward and backward. The tensor is viewed as
// [outer, extent, inner] with the softmax axis in the middle (inner = 1: the last axis); each of
// the outer * inner rows is one warp's or one block's work (row_mapping.h); f32 arithmetic.
// The forward with `lse` is ReduceLogSumExp over the axis: y[row] = max + log Σ exp(x − max), y
// of outer · inner elements (a non-finite max shifts by 0, as the CPU kernel does).
//
// Entries:  forward  (x, y)        y = softmax(x) or log_softmax(x) (or the rows' log-sum-exp)
//           backward (dy, y, dx)   y is the forward's output:
//                                  softmax:     dx = y * (dy - sum(dy * y))
//                                  log-softmax: dx = dy - exp(y) * sum(dy)
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct SoftmaxSpec {
  DType dtype = DType::F32;
  int64_t outer = 1, extent = 1, inner = 1;
  bool log = false;  // log-softmax
  bool lse = false;  // forward only: each row's log-sum-exp (ReduceLogSumExp)
};

KernelSource emit_softmax_forward(const SoftmaxSpec& spec);
KernelSource emit_softmax_backward(const SoftmaxSpec& spec);

}  // namespace dlc::codegen::cuda
