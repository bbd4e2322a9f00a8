// The loss pass: appends the training loss to a forward graph. The graph's outputs become
// (loss, the original outputs…); the label becomes a graph input of role label.
#pragma once

#include <string>

#include "passes/pass.h"

namespace dlc::passes {

struct LossOptions {
  std::string kind = "cross_entropy";  // cross_entropy | mse | l1 | output
  std::string output;                  // the model output the loss applies to (default: the first)
  std::string label = "label";
};

class Loss final : public Pass {
 public:
  explicit Loss(LossOptions options) : options_(std::move(options)) {}
  std::string_view name() const override { return "loss"; }
  std::string_view summary() const override { return "append the training loss"; }
  bool run(ir::Graph& graph) override;

 private:
  LossOptions options_;
};

}  // namespace dlc::passes
