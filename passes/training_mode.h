// Training mode: BatchNormalization switches to batch statistics, and its running mean and
// variance become state updated after each step (as ONNX's training_mode=1 defines, except that
// running_var follows PyTorch: updated with the unbiased batch variance).
// Dropout outputs its mask, which its gradient applies, and takes as its Philox offset a run
// counter: an i64 state value (kDropoutCounter) advanced by one after every run. So every
// training step (every micro-batch, with gradient accumulation) draws new masks, the forward and
// backward of one run share theirs, and a checkpoint, which holds the state, resumes the sequence.
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

/// Name of the state value that counts training runs for the dropout masks.
inline constexpr const char* kDropoutCounter = "dropout_counter";

class TrainingMode final : public Pass {
 public:
  std::string_view name() const override { return "training-mode"; }
  std::string_view summary() const override {
    return "use batch statistics in BatchNormalization and update its running statistics; draw new "
           "dropout masks every run";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
