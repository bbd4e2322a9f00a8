// The training compile pipeline: ONNX forward graph -> the import passes -> training mode ->
// loss -> (mixed precision) -> autodiff -> optimizer -> (channels-last) -> fusion -> DCE -> schedule -> plan,
// all one PassManager pipeline. The plan's inputs are the model's inputs, the label, and the runtime scalars
// "lr", "step" (and "apply" with gradient accumulation); plan.training() carries what the trainer and `dlc
// export` need (the model, batch, micro-steps, label).
#pragma once

#include "passes/loss.h"
#include "passes/optimizer.h"
#include "tools/driver/compile.h"

namespace dlc::driver {

/// The batch of a training run when neither the options nor the model fix one.
inline constexpr int64_t kDefaultBatch = 32;

struct TrainCompileOptions {
  CompileOptions compile;
  passes::LossOptions loss;
  passes::OptimizerOptions optimizer;
  std::string freeze;  // regex of parameter names that get no gradient
  // fp32 | bf16 | fp16 (passes/mixed_precision.h), and fp16's initial loss scale
  // (passes/loss_scaling.h).
  std::string precision = "fp32";
  double loss_scale = 65536.0;
  // auto | nchw | nhwc: channels-last convolutions (passes/channels_last.h; auto: 16-bit CUDA).
  std::string layout = "auto";
  // auto | fused | unfused: one Attention op per attention (passes/fuse_attention.h; auto: 16-bit
  // CUDA).
  std::string attention = "auto";
};

/// Whether a plan input is one of the scalars the trainer feeds rather than data.
bool is_runtime_scalar(const std::string& input_name);

std::unique_ptr<ir::Graph> build_training_graph(const std::string& model_path, TrainCompileOptions options);
/// Compiles a training plan with its TrainingInfo filled (no plan when --stop-after ends the
/// passes); throws dlc::Error.
Compiled compile_training(const std::string& model_path, TrainCompileOptions options);

}  // namespace dlc::driver
