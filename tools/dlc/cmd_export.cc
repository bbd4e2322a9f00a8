// `dlc export PLAN.dlcplan --checkpoint CKPT -o trained.onnx`: the model a training plan was
// compiled from, with the trained values of a checkpoint of that plan. (MODEL.onnx in place of
// the plan works too, without the check that the checkpoint belongs to it.)
#include <fmt/format.h>

#include <cstdio>

#include "dlc/error.h"
#include "frontend/onnx_export.h"
#include "tools/dlc/commands.h"
#include "tools/driver/checkpoint.h"
#include "tools/driver/training_plan.h"

namespace dlc::tool {

namespace {

struct ExportArgs {
  std::string source, checkpoint, output;
};

void export_checkpoint(const ExportArgs& args) {
  driver::TrainingCheckpoint c = driver::read_checkpoint(args.checkpoint);
  if (!driver::is_plan_path(args.source)) {
    frontend::export_trained_onnx(args.source, c.state, args.output);
    return;
  }
  plan::Plan p = driver::read_training_plan(args.source);
  if (driver::plan_fingerprint(p) != c.plan_fingerprint)
    throw Error(
        fmt::format("{}: the checkpoint belongs to another plan than {}", args.checkpoint, args.source));
  frontend::export_trained_onnx_bytes(p.training().source_model(), p.training().source_name(), c.state,
                                      args.output);
}

}  // namespace

Action add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd =
      app.add_subcommand("export", "Write a trained ONNX model from a training plan and a checkpoint");
  cmd->add_option("plan", args->source, "PLAN.dlcplan from `dlc compile --train` (or the MODEL.onnx)")
      ->required();
  cmd->add_option("--checkpoint", args->checkpoint, "checkpoint written by `dlc train --save`")->required();
  cmd->add_option("-o,--output", args->output, "trained.onnx to write")->required();
  return [args] {
    export_checkpoint(*args);
    std::printf("trained model written to %s\n", args->output.c_str());
  };
}

}  // namespace dlc::tool
