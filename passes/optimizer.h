// The optimizer pass: one update op per parameter with a gradient (see autodiff.h), its state
// (momentum buffer, Adam moments, RMSprop averages) as zero-initialized state values, and the
// learning rate and step count as runtime scalar inputs named "lr" and "step" (the trainer feeds
// them each step, which is how learning-rate schedules work without recompiling). Optionally the
// gradients are first accumulated over micro-batches (grad_accumulation.h), unscaled when the
// graph has a loss scale (loss_scaling.h) and clipped to a global L2 norm (clip_grad_norm.h).
#pragma once

#include <string>

#include "passes/pass.h"

namespace dlc::passes {

struct OptimizerOptions {
  std::string kind = "sgd";  // sgd | adam | adamw | rmsprop
  double momentum = 0.0, dampening = 0.0, weight_decay = 0.0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double alpha = 0.99;     // RMSprop smoothing constant
  bool centered = false;   // RMSprop: normalize by the variance estimate
  double clip_norm = 0;    // > 0: clip the global L2 norm of the gradients to this
  int64_t accumulate = 1;  // micro-batches per optimizer step
  // fp16 (loss_scaling.h): finite steps in a row before the loss scale doubles.
  int64_t loss_scale_growth_interval = 2000;
};

/// Names of the runtime scalar inputs the optimizer adds: the learning rate (f32), the optimizer
/// step counting from 1 (f32; with loss scaling the iteration, of which the graph subtracts the
/// skipped steps), and with accumulate > 1 whether this micro-step applies the update (bool).
inline constexpr const char* kLearningRateInput = "lr";
inline constexpr const char* kStepInput = "step";
inline constexpr const char* kApplyInput = "apply";

class Optimizer final : public Pass {
 public:
  explicit Optimizer(OptimizerOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "optimizer"; }
  std::string_view summary() const override { return "add the parameter updates"; }
  bool run(ir::Graph& graph) override;

 private:
  OptimizerOptions options_;
};

}  // namespace dlc::passes
