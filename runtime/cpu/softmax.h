// Softmax and log-softmax along one axis of a tensor seen as [outer, R, inner], max-subtracted:
// exp(x - max) by simd_exp (f32; libm's exp in f64) and its sum in double; and softmax's
// gradient. The Softmax and LogSoftmax kernels and the softmax cross-entropy loss and its gradient
// all compute it here, so the loss's log-probabilities are LogSoftmax's bits.
#pragma once

#include <cstdint>

namespace dlc::cpu {

/// y = softmax (Log: log-softmax) of x along R, for every outer index and inner position; x and
/// y do not overlap. T: float or double. Runs in parallel (OpenMP) when the tensor is large.
template <bool Log, typename T>
void softmax_along(const T* x, T* y, int64_t outer, int64_t R, int64_t inner);

/// Softmax's gradient along R: dx = y * (dy - Σ dy·y), the sum in double in the order of R.
/// dx may alias dy.
template <typename T>
void softmax_grad_along(const T* dy, const T* y, T* dx, int64_t outer, int64_t R, int64_t inner);

}  // namespace dlc::cpu
