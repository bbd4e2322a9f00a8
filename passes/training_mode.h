// Training mode: BatchNormalization switches to batch statistics, and its running mean and
// variance become state updated after each step (as ONNX's training_mode=1 defines).
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class TrainingMode final : public Pass {
 public:
  std::string_view name() const override { return "training-mode"; }
  std::string_view summary() const override {
    return "use batch statistics in BatchNormalization and update its running statistics";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
