// `dlc compile MODEL.onnx -o PLAN.dlcplan [--batch N] [--shape NAME=…]`: writes an inference
// plan; with --train and the training options of `dlc train`, a training plan for
// `dlc train PLAN.dlcplan`.
#include <fmt/format.h>

#include "dlc/error.h"
#include "runtime/plan/plan_file.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/model_options.h"
#include "tools/dlc/training_options.h"

namespace dlc::tool {

namespace {

struct CompileArgs {
  std::string model, output;
  bool train = false;
  ModelOptions model_options;
  TrainingCompileFlags training;
};

plan::Plan compile(CompileArgs& args) {
  if (!args.train) {
    if (const CLI::Option* o = args.training.first_given())
      throw Error(fmt::format("{} needs --train (it is a training option)", o->get_name()));
    driver::CompileOptions options;
    args.model_options.apply(options);
    return driver::compile_model(args.model, options).plan;
  }
  driver::TrainCompileOptions& options = args.training.options;
  args.model_options.apply(options.compile);
  if (options.compile.import.batch == 0) options.compile.import.batch = driver::kDefaultBatch;
  return driver::compile_training(args.model, options).plan;
}

}  // namespace

Action add_compile_command(CLI::App& app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile an ONNX model into a plan");
  cmd->add_option("model", args->model, "MODEL.onnx")->required();
  // Only -o: with --train, --output names the model output the loss applies to, as in `dlc train`.
  cmd->add_option("-o", args->output, "PLAN.dlcplan to write")->required();
  cmd->add_flag("--train", args->train,
                "compile a training plan (loss, backward, optimizer) for `dlc train`");
  args->model_options.add_to(cmd);
  args->training.add_to(cmd);
  return [args] { plan::write_plan_file(compile(*args), args->output); };
}

}  // namespace dlc::tool
