// `dlc inspect MODEL.onnx|PLAN.dlcplan [--ir] [--stats]`.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "dlc/error.h"
#include "ir/printer.h"
#include "runtime/plan/plan_file.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/model_options.h"
#include "tools/driver/compile.h"

namespace dlc::tool {

namespace {

struct InspectArgs {
  std::string model;
  bool ir = false;
  bool stats = false;
  int64_t elide_above = -1;
  ModelOptions model_options;
};

nlohmann::json plan_stats(const plan::Plan& p) {
  int64_t arena = 0, peak = 0, kernels = 0;
  for (const auto& st : p.stages()) {
    arena += st.arena_bytes();
    peak += st.peak_bytes();
    kernels += st.steps_size();
  }
  return {{"ops", kernels},           {"kernels_per_step", kernels}, {"param_bytes", p.param_bytes()},
          {"peak_bytes", peak},       {"arena_bytes", arena},        {"flops_per_step", p.flops_per_step()},
          {"stages", p.stages_size()}};
}

void inspect(const InspectArgs& args) {
  bool plan_file = args.model.size() > 8 && args.model.substr(args.model.size() - 8) == ".dlcplan";
  if (plan_file) {
    if (args.ir)
      throw Error(fmt::format("{}: a plan holds no IR; inspect the ONNX model for --ir", args.model));
    std::cout << plan_stats(plan::read_plan_file(args.model)).dump() << "\n";
    return;
  }
  driver::CompileOptions options;
  args.model_options.apply(options);
  driver::Compiled c = driver::compile_model(args.model, options);
  if (args.ir) ir::print_graph(std::cout, *c.graph, {args.elide_above});
  if (args.stats || !args.ir) {
    nlohmann::json j = plan_stats(c.plan);
    j["ops"] = c.graph->num_nodes();
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
  args->model_options.add_to(cmd);
  return [args] { inspect(*args); };
}

}  // namespace dlc::tool
