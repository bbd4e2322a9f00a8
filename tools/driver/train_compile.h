// The training compile pipeline: ONNX forward graph -> training mode -> loss -> autodiff ->
// optimizer -> DCE -> plan. The plan's inputs are the model's inputs, the label, and the
// runtime scalars "lr" and "step".
#pragma once

#include "passes/loss.h"
#include "passes/optimizer.h"
#include "tools/driver/compile.h"

namespace dlc::driver {

struct TrainCompileOptions {
  CompileOptions compile;
  passes::LossOptions loss;
  passes::OptimizerOptions optimizer;
  std::string freeze;  // regex of parameter names that get no gradient
};

std::unique_ptr<ir::Graph> build_training_graph(const std::string& model_path, TrainCompileOptions options);
Compiled compile_training(const std::string& model_path, TrainCompileOptions options);

}  // namespace dlc::driver
