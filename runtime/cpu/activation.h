// The folded activation epilogue of MatMul and Conv (attribute `activation`, ir/ops/nn.def),
// applied by the kernel to its f32 (or f64) result right after the GEMM or convolution.
//
// Not a oneDNN post-op: oneDNN 2.6's eltwise_relu (alpha 0), eltwise_clip and a binary_max with 0
// all turn a NaN into 0 on the JIT kernels (a max instruction with the NaN first), while the
// unfused Relu keeps NaN and -0 as torch.relu does (`x < 0 ? 0 : x`). Applying the same
// comparison to the stored result gives the unfused bits exactly; the pass runs over the result
// while it is still in cache and costs a small fraction of the GEMM (it is one step, with no
// pre-activation buffer, instead of two).
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

/// x < 0 ? 0 : x over `n` values in place (NaN and -0 pass through, as the Relu kernel).
template <typename T>
void apply_relu(T* x, int64_t n) {
  parallel_chunks(n, 1 << 15, [x](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) x[i] = x[i] < T(0) ? T(0) : x[i];
  });
}

}  // namespace dlc::cpu
