// The training-compile options shared by `dlc compile --train` and `dlc train MODEL.onnx`: the
// loss, the optimizer with its hyperparameters, clipping and gradient accumulation, and
// --freeze. (--batch and --shape are ModelOptions; the loop's options belong to `dlc train`.)
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "tools/driver/train_compile.h"

namespace dlc::tool {

struct TrainingCompileFlags {
  driver::TrainCompileOptions options;

  void add_to(CLI::App* cmd);
  /// The first of these options given on the command line, or null.
  const CLI::Option* first_given() const;
  /// Throws where the options contradict each other: --loss-scale or
  /// --loss-scale-growth-interval given with a --precision other than fp16.
  void check() const;

 private:
  std::vector<const CLI::Option*> registered_;
  std::vector<const CLI::Option*> fp16_only_;
};

}  // namespace dlc::tool
