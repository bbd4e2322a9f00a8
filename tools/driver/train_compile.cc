// The training compile pipeline.
#include "tools/driver/train_compile.h"

#include "codegen/lower.h"
#include "ir/verifier.h"
#include "passes/autodiff.h"
#include "passes/dce.h"
#include "passes/training_mode.h"

namespace dlc::driver {

std::unique_ptr<ir::Graph> build_training_graph(const std::string& model_path, TrainCompileOptions options) {
  std::unique_ptr<ir::Graph> g = import_and_optimize(model_path, options.compile);
  passes::TrainingMode training_mode;
  passes::Loss loss(options.loss);
  passes::Autodiff autodiff(options.freeze);
  passes::Optimizer optimizer(options.optimizer);
  passes::DeadCodeElimination dce;
  for (passes::Pass* p :
       std::initializer_list<passes::Pass*>{&training_mode, &loss, &autodiff, &optimizer, &dce}) {
    p->run(*g);
    ir::verify(*g);
  }
  return g;
}

Compiled compile_training(const std::string& model_path, TrainCompileOptions options) {
  Compiled c;
  std::string device = options.compile.device;
  c.graph = build_training_graph(model_path, std::move(options));
  c.plan = codegen::lower_to_plan(*c.graph, {device});
  return c;
}

}  // namespace dlc::driver
