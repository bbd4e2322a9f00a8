// Attention fusion (`--attention fused`; the default for 16-bit CUDA plans): each
// MatMul(q, kᵀ) -> [Mul or Div by a scalar constant] -> [causal mask] -> Softmax(last axis) ->
// MatMul(·, v), the scaling and the mask in either order, becomes one Attention(q, k, v)
// {scale, causal} node (ir/ops/nn.def), as torch.compile's attention patterns
// become scaled_dot_product_attention: the S x Sk scores and probabilities are neither stored nor
// saved for the backward, whose AttentionGrad recomputes them (FlashAttention's scheme). kᵀ is
// read as k through its Transpose (the last two axes swapped back; a Transpose pair that cancels
// is its source). The causal mask is masked_fill's Where(cond, fill, scores) (or
// Where(cond, scores, fill)) with a constant cond and a fill of -10000 or less, or an Add of a
// constant 0 / -10000-or-less mask, masking exactly key j > i of row i. Every intermediate must
// have the chain's next node as its only reader. Where q, kᵀ and v come from Transposes that
// swapped the heads out of the sequence ([..., S, H, D] -> [..., H, S, D]; kᵀ's composed) and the
// result's one reader swaps them back, the Attention is seq-major (seq_major = 1): it reads the
// projections' [..., S, H, D] layout and writes the result in it, so neither those Transposes nor
// their gradients' run (FlashAttention's native layout). Runs before mixed precision and autodiff
// (stats attentions_fused, attentions_left, attentions_seq_major). Not exact: the sums run in
// another order.
#pragma once

#include <string>

#include "passes/pass.h"

namespace dlc::passes {

/// Whether a training plan fuses attention: `attention` is "fused", "unfused" or "auto" (fused
/// for a CUDA device with a 16-bit precision); anything else is an error.
bool wants_fused_attention(const std::string& attention, const std::string& device,
                           const std::string& precision);

class FuseAttention final : public Pass {
 public:
  /// `cuda_shapes_only`: fuse only the attention the CUDA kernels run (dlc/attention.h:
  /// head sizes multiples of 16 up to 128), as `--attention auto` does for a CUDA plan; the rest
  /// is left unfused (stat attentions_left).
  explicit FuseAttention(bool cuda_shapes_only = false) : cuda_shapes_only_(cuda_shapes_only) {}
  std::string_view name() const override { return "fuse-attention"; }
  std::string_view summary() const override {
    return "fuse attention's MatMul-Softmax-MatMul into one Attention op";
  }
  bool run(ir::Graph& graph) override;

 private:
  bool cuda_shapes_only_;
};

}  // namespace dlc::passes
