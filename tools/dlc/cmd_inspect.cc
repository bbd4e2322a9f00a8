// `dlc inspect MODEL.onnx|PLAN.dlcplan [--ir] [--stats]`; a model is compiled as `dlc compile`
// would (--train and the training options give a training plan). For a training plan the step
// counts are those of one whole optimizer step: with --accumulate K, K runs of the plan. A CUDA
// plan also reports its distinct generated kernels, kernel steps, library calls and host steps.
// A model's stats also say what the memory planning saved: peak/arena_bytes_unscheduled are the
// figures before the schedule pass reordered the nodes (the same as with --disable-pass schedule;
// equal to peak/arena_bytes when it did not run), peak/arena_bytes_unshared those of the final
// graph lowered without Reshape views and in-place state updates.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "codegen/plan_memory_model.h"
#include "dlc/error.h"
#include "ir/printer.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "runtime/plan/plan_values.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/compile_flags.h"
#include "tools/driver/training_plan.h"

namespace dlc::tool {

namespace {

struct InspectArgs {
  std::string model;
  bool ir = false;
  bool stats = false;
  int64_t elide_above = -1;
  CompileFlags flags;
};

// The bytes a stage's steps read and write, each operand counted once per step (an in-place
// update twice): a lower bound on a run's memory traffic, as if each kernel touched each operand
// once (a GEMM's re-reads and a reduction's workspace are not in it). CUDA alias steps move nothing.
// Added to `by_kernel` under each step's kernel name.
void add_operand_bytes(const plan::Stage& stage, std::map<std::string, int64_t>& by_kernel) {
  for (const plan::Step& step : stage.steps()) {
    if (step.cuda().kind() == plan::CudaStep::HOST && step.cuda().call() == "alias") continue;
    int64_t& bytes = by_kernel[step.kernel()];
    for (const auto* buffers : {&step.inputs(), &step.outputs()})
      for (int32_t b : *buffers)
        if (b >= 0 && b < stage.buffers_size()) bytes += int64_t(plan::buffer_type(stage.buffers(b)).bytes());
  }
}

nlohmann::json plan_stats(const plan::Plan& p) {
  int64_t arena = 0, peak = 0, kernels = 0, operands = 0;
  std::map<std::string, int64_t> by_kernel;
  for (const auto& st : p.stages()) {
    arena += st.arena_bytes();
    peak += st.peak_bytes();
    kernels += st.steps_size();
    add_operand_bytes(st, by_kernel);
  }
  const bool training = p.has_training();
  const int64_t runs = training ? std::max<int64_t>(p.training().micro_steps(), 1) : 1;
  nlohmann::json operands_by_kernel = nlohmann::json::object();
  for (auto& [kernel, bytes] : by_kernel) {
    operands += bytes;
    operands_by_kernel[kernel] = bytes * runs;
  }
  nlohmann::json j = {{"ops", kernels},
                      {"kernels_per_step", kernels * runs},
                      {"operand_bytes_per_step", operands * runs},
                      {"operand_bytes_by_kernel", operands_by_kernel},
                      {"param_bytes", p.param_bytes()},
                      {"peak_bytes", peak},
                      {"arena_bytes", arena},
                      {"flops_per_step", p.flops_per_step() * runs},
                      {"stages", p.stages_size()},
                      {"training", training}};
  if (training) {
    j["batch"] = p.training().batch();
    j["micro_steps"] = runs;
  }
  if (plan::has_cuda_stage(p)) {
    const plan::CudaStepCounts n = plan::count_cuda_steps(p);
    j["generated_kernels"] = n.generated_kernels;  // distinct compiled kernels
    j["kernel_steps"] = n.kernel_steps;            // steps launching one
    j["library_calls"] = n.library_calls;
    j["host_steps"] = n.host_steps;
    j["host_kernel_steps"] = n.host_kernel_steps;
  }
  return j;
}

// The figures without scheduling and without buffer sharing (see the top of the file).
void add_memory_savings(nlohmann::json& j, const driver::Compiled& c, const std::string& device) {
  j["peak_bytes_unscheduled"] = j["peak_bytes"];
  j["arena_bytes_unscheduled"] = j["arena_bytes"];
  for (const passes::PassRecord& r : c.passes)
    if (r.name == "schedule" && r.ran) {
      j["peak_bytes_unscheduled"] = r.stats.at("peak_before");
      j["arena_bytes_unscheduled"] = r.stats.at("arena_before");
    }
  const ir::MemoryFigures unshared =
      codegen::PlanMemoryModel({device, codegen::AliasOptions{false, false}}).measure(*c.graph);
  j["peak_bytes_unshared"] = unshared.peak_bytes;
  j["arena_bytes_unshared"] = unshared.arena_bytes;
}

void inspect(InspectArgs& args) {
  if (driver::is_plan_path(args.model)) {
    if (args.ir)
      throw Error(fmt::format("{}: a plan holds no IR; inspect the ONNX model for --ir", args.model));
    if (args.flags.train || args.flags.training.first_given() || args.flags.pipeline.first_given() ||
        !args.flags.model.shapes.empty() || args.flags.model.batch != 0 || args.flags.device != "cpu" ||
        args.flags.arch != "sm_90")
      throw Error(
          fmt::format("{}: compile options apply to a model, and this is a compiled plan", args.model));
    std::cout << plan_stats(plan::read_plan_file(args.model)).dump() << "\n";
    return;
  }
  const driver::Compiled c = args.flags.compile(args.model);
  if (PipelineFlags::print_if_stopped(c)) return;
  if (args.ir) ir::print_graph(std::cout, *c.graph, {args.elide_above});
  if (args.stats || !args.ir) {
    nlohmann::json j = plan_stats(c.plan);
    j["ops"] = c.graph->num_nodes();
    add_memory_savings(j, c, args.flags.device);
    std::cout << j.dump() << "\n";
  }
}

}  // namespace

Action add_inspect_command(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a model's IR or a plan's statistics");
  cmd->add_option("model", args->model, "MODEL.onnx or PLAN.dlcplan")->required();
  cmd->add_flag("--ir", args->ir, "print the IR after import and optimization");
  cmd->add_flag("--stats", args->stats, "print statistics as one JSON object");
  cmd->add_option("--elide-above", args->elide_above,
                  "with --ir, print tensors of more than N elements as <elided N elements>");
  args->flags.add_to(cmd);
  return [args] { inspect(*args); };
}

}  // namespace dlc::tool
