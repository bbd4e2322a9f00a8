// The folded epilogues that MatMul, Conv, ConvTranspose and BatchNormalization apply to their
// stored result (ir/ops/nn.def, norm.def): a residual (one more operand of the result's shape) and
// the activation (attribute `activation`); and the Relu gradient BatchNormGrad folds in.
//
// Neither is a oneDNN post-op: oneDNN 2.6's eltwise_relu (alpha 0), eltwise_clip and a binary_max
// with 0 all turn a NaN into 0 on the JIT kernels (a max instruction with the NaN first), while the
// unfused Relu keeps NaN and -0 as torch.relu does (`x < 0 ? 0 : x`); and a sum post-op would need
// the residual copied into the result first. One pass over the result while it is still in cache
// adds the residual and applies the Relu with the unfused ops' bits exactly, for a small fraction
// of the GEMM's time and with no pre-activation buffer.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel.h"

namespace dlc::cpu {

/// Whether the kernel of `ctx` has a Relu epilogue (fails on an unknown activation).
inline bool relu_epilogue(const KernelContext& ctx) {
  if (!ctx.attrs.has("activation")) return false;
  const std::string& act = ctx.attrs.s("activation");
  if (act != "relu") ctx.fail("unknown activation '{}'", act);
  return true;
}

/// The Relu of one value: NaN and -0 pass through, as the Relu kernel's (torch.relu).
template <typename T>
T relu_value(T x) {
  return x < T(0) ? T(0) : x;
}

/// The Relu gradient of one value (ReluGrad): dy where the Relu's result y > 0, else +0.
template <typename T>
T relu_grad_value(T dy, T y) {
  return y > T(0) ? dy : T(0);
}

/// x = x + residual (when not null), then relu_value(x) (when `relu`), over `n` values in place.
template <typename T>
void apply_epilogue(T* x, const T* residual, bool relu, int64_t n) {
  if (!residual && !relu) return;
  parallel_chunks(n, 1 << 15, [=](int64_t begin, int64_t end) {
    if (residual) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) x[i] += residual[i];
    }
    if (relu) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) x[i] = relu_value(x[i]);
    }
  });
}

}  // namespace dlc::cpu
