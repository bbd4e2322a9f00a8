// The compile pipeline shared by the dlc tool, the tests and the benchmarks:
// ONNX file -> IR (import) -> passes -> plan.
#pragma once

#include <memory>
#include <string>

#include "frontend/onnx_import.h"
#include "ir/graph.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::driver {

struct CompileOptions {
  frontend::ImportOptions import;
  std::string device = "cpu";
};

struct Compiled {
  std::unique_ptr<ir::Graph> graph;
  plan::Plan plan;
};

/// Imports `model_path` and runs the inference pipeline; throws dlc::Error.
std::unique_ptr<ir::Graph> import_and_optimize(const std::string& model_path, CompileOptions options);
/// Same for a serialized standalone model (no external data) named `what` in messages.
std::unique_ptr<ir::Graph> import_and_optimize_bytes(const std::string& model_bytes, const std::string& what,
                                                     CompileOptions options);
/// import_and_optimize followed by lowering.
Compiled compile_model(const std::string& model_path, CompileOptions options);

}  // namespace dlc::driver
