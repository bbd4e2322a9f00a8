// Dynamic loss scaling for fp16 training (PyTorch's GradScaler as graph ops). The mixed-precision
// pass adds the state value "loss_scale" (f32, initially 65536); autodiff then seeds the backward
// with it instead of 1, so every gradient is the gradient of loss × scale and small fp16 gradients
// do not flush to zero. The optimizer pass, when the graph has that state, multiplies the
// (accumulated) gradients by 1/scale, checks that all of them are finite, skips the update where
// one is not (parameters and optimizer state keep their bytes, gated with Where like gradient
// accumulation), and updates the scale: halved after a step with an inf or NaN, doubled after
// `growth_interval` finite steps in a row (counted by the f32 state "loss_scale.good_steps").
// A non-finite loss skips the step too, even where its gradients happen to be finite. As with
// GradScaler, a skipped step is not an optimizer step: the f32 state "loss_scale.skipped_steps"
// counts them, and Adam's step count is the fed "step" minus that. All three are state, so
// checkpoints hold them and a resumed run continues the same sequence.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace dlc::passes {

class GradientAccumulator;

/// Names of the loss-scaling state values.
inline constexpr const char* kLossScale = "loss_scale";
inline constexpr const char* kLossScaleGoodSteps = "loss_scale.good_steps";
inline constexpr const char* kLossScaleSkippedSteps = "loss_scale.skipped_steps";

/// Adds the "loss_scale" state with `initial` (positive) as its value.
ir::Value* add_loss_scale(ir::Graph& g, double initial);

struct UnscaledGradients {
  std::vector<ir::Value*> grads;  // divided by the scale
  /// The f32 scalar state counting the skipped steps before this one (kLossScaleSkippedSteps).
  ir::Value* skipped_steps = nullptr;
};

/// The gradients divided by the loss scale `scale`; registers, through `accumulator`, that the
/// updates apply only when every gradient and the `loss` (of every micro-batch) are finite, the
/// scale's own update and the count of skipped steps.
UnscaledGradients unscale_gradients(ir::Graph& g, ir::Value* scale, ir::Value* loss,
                                    const std::vector<ir::Value*>& grads, int64_t growth_interval,
                                    GradientAccumulator& accumulator);

}  // namespace dlc::passes
