// The compile pipeline.
#include "tools/driver/compile.h"

#include <onnx/onnx_pb.h>

#include <iostream>

#include "codegen/cpu_evaluator.h"
#include "codegen/lower.h"
#include "passes/dce.h"
#include "passes/expand_gradients.h"
#include "passes/pass_manager.h"

namespace dlc::driver {

namespace {

// Imports with the constant evaluator of the CPU kernels, expands Gradient nodes, then removes
// dead code.
template <typename Import>
std::unique_ptr<ir::Graph> import_with(CompileOptions options, Import&& import) {
  codegen::CpuEvaluator evaluator;
  options.import.evaluator = &evaluator;
  std::unique_ptr<ir::Graph> graph = import(options.import);
  passes::PassManager pm({}, std::cerr);
  pm.add(std::make_unique<passes::ExpandGradients>());
  pm.add(std::make_unique<passes::DeadCodeElimination>());
  pm.run(*graph);
  return graph;
}

}  // namespace

std::unique_ptr<ir::Graph> import_and_optimize(const std::string& model_path, CompileOptions options) {
  return import_with(std::move(options), [&](const frontend::ImportOptions& import) {
    return frontend::import_onnx_file(model_path, import);
  });
}

std::unique_ptr<ir::Graph> import_and_optimize_bytes(const std::string& model_bytes, const std::string& what,
                                                     CompileOptions options) {
  return import_with(std::move(options), [&](const frontend::ImportOptions& import) {
    return frontend::import_onnx_model(frontend::parse_onnx_model(model_bytes, what), "", import, what);
  });
}

Compiled compile_model(const std::string& model_path, CompileOptions options) {
  Compiled c;
  std::string device = options.device;
  c.graph = import_and_optimize(model_path, std::move(options));
  c.plan = codegen::lower_to_plan(*c.graph, {device});
  return c;
}

}  // namespace dlc::driver
