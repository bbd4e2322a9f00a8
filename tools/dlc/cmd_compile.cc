// `dlc compile MODEL.onnx -o PLAN.dlcplan [--batch N] [--shape NAME=…]`: writes a plan.
#include "runtime/plan/plan_file.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/model_options.h"

namespace dlc::tool {

namespace {
struct CompileArgs {
  std::string model, output;
  ModelOptions model_options;
};
}  // namespace

Action add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model into a plan");
  cmd->add_option("model", args->model, "MODEL.onnx")->required();
  cmd->add_option("-o,--output", args->output, "PLAN.dlcplan to write")->required();
  args->model_options.add_to(cmd);
  return [args] {
    driver::CompileOptions options;
    args->model_options.apply(options);
    plan::write_plan_file(driver::compile_model(args->model, options).plan, args->output);
  };
}

}  // namespace dlc::tool
