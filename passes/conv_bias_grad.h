// Conv bias gradient into the filter gradient (CPU plans): a convolution's bias gradient is its dy
// summed over the batch and spatial axes, ReduceSum(dy, axes [0, 2, …]), which autodiff emits
// beside ConvGradFilter(dy, x). The CPU kernel of ConvGradFilter runs oneDNN's backward-weights
// convolution, which can compute that sum too (its diff_bias) while it reads dy: the pass gives
// the ConvGradFilter a second output, the bias gradient, and removes the ReduceSum, a pass over dy
// (the main job: two such sums, 0.4 ms of a 14 ms step). Not exact: oneDNN sums in its own order,
// in f32. CUDA plans keep the ReduceSum (the CUDA ConvGradFilter refuses a second output).
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class ConvBiasGrad final : public Pass {
 public:
  std::string_view name() const override { return "conv-bias-grad"; }
  std::string_view summary() const override {
    return "compute an f32 convolution's bias gradient in its filter gradient (CPU plans)";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
