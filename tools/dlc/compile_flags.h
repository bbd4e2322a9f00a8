// The options of the commands that compile an ONNX model into an inference or, with --train, a
// training plan (`dlc compile`, `dlc inspect`): --train, --device and --arch, the model options,
// the training-compile options and the pipeline flags, and the compile they describe.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "tools/dlc/model_options.h"
#include "tools/dlc/pipeline_options.h"
#include "tools/dlc/training_options.h"

namespace dlc::tool {

struct CompileFlags {
  bool train = false;
  std::string device = "cpu";     // cpu, cuda, cuda:N
  std::string arch = "sm_90";     // CUDA plans: the architecture NVRTC compiles the kernels for
  bool no_host_fallback = false;  // CUDA plans: a step with no CUDA path is an error
  ModelOptions model;
  TrainingCompileFlags training;
  PipelineFlags pipeline;

  void add_to(CLI::App* cmd);
  /// Compiles `model_path`; a training option without --train is an error.
  driver::Compiled compile(const std::string& model_path);
};

}  // namespace dlc::tool
