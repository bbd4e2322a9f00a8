// The compile pipeline.
#include "tools/driver/compile.h"

#include "codegen/cpu_evaluator.h"
#include "codegen/lower.h"
#include "ir/verifier.h"
#include "passes/dce.h"

namespace dlc::driver {

std::unique_ptr<ir::Graph> import_and_optimize(const std::string& model_path, CompileOptions options) {
  codegen::CpuEvaluator evaluator;
  options.import.evaluator = &evaluator;
  std::unique_ptr<ir::Graph> graph = frontend::import_onnx_file(model_path, options.import);
  passes::DeadCodeElimination dce;
  dce.run(*graph);
  ir::verify(*graph);
  return graph;
}

Compiled compile_model(const std::string& model_path, CompileOptions options) {
  Compiled c;
  std::string device = options.device;
  c.graph = import_and_optimize(model_path, std::move(options));
  c.plan = codegen::lower_to_plan(*c.graph, {device});
  return c;
}

}  // namespace dlc::driver
