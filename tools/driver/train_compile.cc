// The training compile pipeline.
#include "tools/driver/train_compile.h"

#include <iostream>
#include "codegen/lower.h"
#include "codegen/plan_memory_model.h"
#include "frontend/onnx_export.h"

#include "passes/autodiff.h"
#include "passes/channels_last.h"
#include "passes/conv_bias_grad.h"
#include "passes/dce.h"
#include "passes/fuse_attention.h"
#include "passes/fusion.h"
#include "passes/mixed_precision.h"
#include "passes/pass_manager.h"
#include "passes/schedule_memory.h"
#include "passes/training_mode.h"
#include "tools/driver/cuda_plan.h"

namespace dlc::driver {

namespace {

// Runs the import passes and the training passes as one pipeline, so the pipeline flags see
// every pass; false when --stop-after ended it. What the passes did goes to `records` if given.
bool run_training_passes(ir::Graph& g, const TrainCompileOptions& options,
                         std::vector<passes::PassRecord>* records = nullptr) {
  passes::PassManager pm(options.compile.pipeline, std::cerr);
  add_import_passes(pm);
  pm.add(std::make_unique<passes::TrainingMode>());
  pm.add(std::make_unique<passes::Loss>(options.loss), /*required=*/true);
  if (passes::wants_fused_attention(options.attention, options.compile.device, options.precision))
    pm.add(std::make_unique<passes::FuseAttention>(options.attention == "auto"));
  // Only a half precision adds the pass, so an f32 pipeline keeps its numbering.
  if (const DType half = passes::parse_precision(options.precision); half != DType::F32)
    pm.add(std::make_unique<passes::MixedPrecision>(half, options.loss_scale));
  pm.add(std::make_unique<passes::Autodiff>(options.freeze), /*required=*/true);
  pm.add(std::make_unique<passes::Optimizer>(options.optimizer), /*required=*/true);
  if (options.compile.device == "cpu") pm.add(std::make_unique<passes::ConvBiasGrad>());
  if (passes::wants_channels_last(options.layout, options.compile.device, options.precision))
    pm.add(std::make_unique<passes::ChannelsLast>());
  pm.add(std::make_unique<passes::Fusion>());
  pm.add(std::make_unique<passes::DeadCodeElimination>());
  const codegen::PlanMemoryModel memory({options.compile.device, options.compile.aliases});
  pm.add(std::make_unique<passes::ScheduleMemory>(memory));
  const bool finished = pm.run(g);
  if (records) *records = pm.records();
  return finished;
}

// The leading dimension of the first data input (the rows of one micro-batch).
int64_t batch_of(const ir::Graph& g) {
  for (const ir::Value* v : g.inputs())
    if (!is_runtime_scalar(v->name) && !v->type.shape.empty()) return v->type.shape[0];
  return 0;
}

}  // namespace

bool is_runtime_scalar(const std::string& input_name) {
  return input_name == passes::kLearningRateInput || input_name == passes::kStepInput ||
         input_name == passes::kApplyInput;
}

std::unique_ptr<ir::Graph> build_training_graph(const std::string& model_path, TrainCompileOptions options) {
  std::unique_ptr<ir::Graph> g = import_model(model_path, options.compile);
  run_training_passes(*g, options);
  return g;
}

Compiled compile_training(const std::string& model_path, TrainCompileOptions options) {
  // The plan keeps the very bytes it was compiled from, so export and evaluation need no file.
  std::string model = frontend::read_standalone_onnx(model_path);
  Compiled c;
  c.graph = import_model_bytes(model, model_path, options.compile);
  c.stopped = !run_training_passes(*c.graph, options, &c.passes);
  if (c.stopped) return c;
  c.plan = codegen::lower_to_plan(*c.graph, {options.compile.device, options.compile.aliases});
  finish_device_plan(c.plan, options.compile.arch, options.compile.host_fallback);
  plan::TrainingInfo* info = c.plan.mutable_training();
  info->set_source_model(std::move(model));
  info->set_source_name(model_path);
  info->set_batch(batch_of(*c.graph));
  info->set_micro_steps(options.optimizer.accumulate);
  info->set_label(options.loss.label);
  info->set_loss(options.loss.kind);
  info->set_loss_output(options.loss.output);
  info->set_device(options.compile.device);
  for (const auto& [name, dims] : options.compile.import.shapes) {
    plan::NamedShape* s = info->add_input_shapes();
    s->set_name(name);
    for (int64_t d : dims) s->add_dims(d);
  }
  return c;
}

}  // namespace dlc::driver
