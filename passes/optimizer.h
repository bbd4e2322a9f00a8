// The optimizer pass: one update op per parameter with a gradient (see autodiff.h), its state
// (momentum buffer, Adam moments) as zero-initialized state values, and the learning rate and
// step count as runtime scalar inputs named "lr" and "step" (the trainer feeds them each step,
// which is how learning-rate schedules work without recompiling).
#pragma once

#include <string>

#include "passes/pass.h"

namespace dlc::passes {

struct OptimizerOptions {
  std::string kind = "sgd";  // sgd | adam | adamw
  double momentum = 0.0, dampening = 0.0, weight_decay = 0.0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

/// Names of the runtime scalar inputs the optimizer adds.
inline constexpr const char* kLearningRateInput = "lr";
inline constexpr const char* kStepInput = "step";

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
