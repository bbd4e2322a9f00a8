// The compile pipeline.
#include "tools/driver/compile.h"

#include <onnx/onnx_pb.h>

#include <iostream>

#include "codegen/cpu_evaluator.h"
#include "codegen/lower.h"
#include "codegen/plan_memory_model.h"
#include "passes/canonicalize.h"
#include "passes/dce.h"
#include "passes/expand_gradients.h"
#include "passes/fusion.h"
#include "passes/lower_einsum.h"
#include "passes/schedule_memory.h"
#include "tools/driver/cuda_plan.h"

namespace dlc::driver {

namespace {

// Imports with the constant evaluator of the CPU kernels.
template <typename Import>
std::unique_ptr<ir::Graph> import_with(const CompileOptions& options, Import&& import) {
  codegen::CpuEvaluator evaluator;
  frontend::ImportOptions import_options = options.import;
  import_options.evaluator = &evaluator;
  return import(import_options);
}

// Runs the inference pipeline: the import passes, fusion, then scheduling for the plan's memory;
// false when --stop-after ended it.
bool optimize(ir::Graph& graph, const CompileOptions& options,
              std::vector<passes::PassRecord>* records = nullptr) {
  passes::PassManager pm(options.pipeline, std::cerr);
  add_import_passes(pm);
  pm.add(std::make_unique<passes::Fusion>());
  const codegen::PlanMemoryModel memory({options.device, options.aliases});
  pm.add(std::make_unique<passes::ScheduleMemory>(memory));
  const bool finished = pm.run(graph);
  if (records) *records = pm.records();
  return finished;
}

}  // namespace

std::unique_ptr<ir::Graph> import_model(const std::string& model_path, const CompileOptions& options) {
  return import_with(options, [&](const frontend::ImportOptions& import) {
    return frontend::import_onnx_file(model_path, import);
  });
}

std::unique_ptr<ir::Graph> import_model_bytes(const std::string& model_bytes, const std::string& what,
                                              const CompileOptions& options) {
  return import_with(options, [&](const frontend::ImportOptions& import) {
    return frontend::import_onnx_model(frontend::parse_onnx_model(model_bytes, what), "", import, what);
  });
}

void add_import_passes(passes::PassManager& pm) {
  pm.add(std::make_unique<passes::ExpandGradients>());
  pm.add(std::make_unique<passes::LowerEinsum>());
  pm.add(std::make_unique<passes::Canonicalize>());
  pm.add(std::make_unique<passes::DeadCodeElimination>());
}

std::unique_ptr<ir::Graph> import_and_optimize(const std::string& model_path, CompileOptions options) {
  std::unique_ptr<ir::Graph> graph = import_model(model_path, options);
  optimize(*graph, options);
  return graph;
}

std::unique_ptr<ir::Graph> import_and_optimize_bytes(const std::string& model_bytes, const std::string& what,
                                                     CompileOptions options) {
  std::unique_ptr<ir::Graph> graph = import_model_bytes(model_bytes, what, options);
  optimize(*graph, options);
  return graph;
}

Compiled compile_model(const std::string& model_path, CompileOptions options) {
  Compiled c;
  c.graph = import_model(model_path, options);
  c.stopped = !optimize(*c.graph, options, &c.passes);
  if (!c.stopped) c.plan = codegen::lower_to_plan(*c.graph, {options.device, options.aliases});
  if (!c.stopped) finish_device_plan(c.plan, options.arch, options.host_fallback);
  return c;
}

}  // namespace dlc::driver
