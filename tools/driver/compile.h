// The compile pipeline shared by the dlc tool, the tests and the benchmarks:
// ONNX file -> IR (import) -> passes -> plan.
#pragma once

#include <memory>
#include <string>

#include "codegen/lower.h"
#include "frontend/onnx_import.h"
#include "ir/graph.h"
#include "passes/pass_manager.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::driver {

struct CompileOptions {
  frontend::ImportOptions import;
  std::string device = "cpu";  // cpu, cuda, cuda:N (--device)
  std::string arch = "sm_90";  // the GPU architecture of CUDA plans' cubins (--arch)
  bool host_fallback = true;   // CUDA plans: a step with no CUDA path runs on the host (--no-host-fallback)
  passes::PipelineOptions pipeline;  // --disable-pass, --print-ir-after, --stop-after, …
  codegen::AliasOptions aliases;     // buffer sharing in the plan (tests turn it off to compare)
};

struct Compiled {
  std::unique_ptr<ir::Graph> graph;
  plan::Plan plan;
  /// --stop-after ended the passes: `graph` is the IR after that pass and `plan` is empty.
  bool stopped = false;
  /// What each pass of the pipeline did (`dlc inspect --stats` reports the schedule's figures).
  std::vector<passes::PassRecord> passes;
};

/// Imports a model without running any pass (the constant evaluator folds constant subgraphs
/// during import); throws dlc::Error.
std::unique_ptr<ir::Graph> import_model(const std::string& model_path, const CompileOptions& options);
/// Same for a serialized standalone model (no external data) named `what` in messages.
std::unique_ptr<ir::Graph> import_model_bytes(const std::string& model_bytes, const std::string& what,
                                              const CompileOptions& options);
/// Appends the passes every pipeline runs on an imported graph: expand-gradients, lower-einsum, canonicalize,
/// dce. The inference pipeline is these, fusion and schedule; the training pipeline continues
/// after them.
void add_import_passes(passes::PassManager& pm);

/// Imports `model_path` and runs the inference pipeline; throws dlc::Error. (A --stop-after in
/// the options leaves the graph partly optimized; compile_model reports it.)
std::unique_ptr<ir::Graph> import_and_optimize(const std::string& model_path, CompileOptions options);
/// Same for a serialized standalone model (no external data) named `what` in messages.
std::unique_ptr<ir::Graph> import_and_optimize_bytes(const std::string& model_bytes, const std::string& what,
                                                     CompileOptions options);
/// import_and_optimize followed by lowering (none when --stop-after ends the passes).
Compiled compile_model(const std::string& model_path, CompileOptions options);

}  // namespace dlc::driver
