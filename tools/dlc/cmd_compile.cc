// `dlc compile MODEL.onnx -o PLAN.dlcplan [--batch N] [--shape NAME=…] [pipeline flags]`: writes
// an inference plan; with --train and the training options of `dlc train`, a training plan for
// `dlc train PLAN.dlcplan`. With --stop-after it prints the IR instead and writes no plan.
#include <cstdio>

#include "runtime/plan/plan_file.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/compile_flags.h"
#include "tools/driver/cuda_plan.h"

namespace dlc::tool {

namespace {

struct CompileArgs {
  std::string model, output;
  CompileFlags flags;
};

}  // namespace

Action add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model into a plan");
  cmd->add_option("model", args->model, "MODEL.onnx")->required();
  // Only -o: with --train, --output names the model output the loss applies to, as in `dlc train`.
  cmd->add_option("-o", args->output, "PLAN.dlcplan to write")->required();
  args->flags.add_to(cmd);
  return [args] {
    const driver::Compiled c = args->flags.compile(args->model);
    if (PipelineFlags::print_if_stopped(c)) return;
    std::fputs(driver::host_kernel_notes(c.plan).c_str(), stderr);
    plan::write_plan_file(c.plan, args->output);
  };
}

}  // namespace dlc::tool
