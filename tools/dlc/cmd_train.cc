// `dlc train MODEL.onnx|PLAN.dlcplan --data DATA.npz [options]`: compiles a training plan (or
// reads one made by `dlc compile --train`) and trains it; with --stop-after it prints the IR at
// that pass instead and trains nothing.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "dlc/error.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/model_options.h"
#include "tools/dlc/pipeline_options.h"
#include "tools/dlc/training_options.h"
#include "tools/driver/trainer.h"
#include "tools/driver/training_plan.h"

namespace dlc::tool {

namespace {

struct TrainArgs {
  std::string model;
  ModelOptions model_options;
  TrainingCompileFlags compile;
  PipelineFlags pipeline;
  driver::TrainOptions train;
};

// A progress bar on a terminal; a line every 100 steps otherwise.
void print_progress(bool tty, int64_t step, int64_t total, double loss, double sps) {
  if (tty) {
    const int width = 30, done = int(width * step / std::max<int64_t>(total, 1));
    std::printf("\r[%s%s] step %lld/%lld  loss %.4f  %.0f samples/s ", std::string(size_t(done), '#').c_str(),
                std::string(size_t(width - done), ' ').c_str(), (long long)step, (long long)total, loss, sps);
    if (step == total) std::printf("\n");
    std::fflush(stdout);
  } else if (step == 1 || step % 100 == 0 || step == total) {
    std::printf("step %lld/%lld loss %.6f samples/s %.1f\n", (long long)step, (long long)total, loss, sps);
  }
}

driver::TrainReport train_plan_file(TrainArgs& args) {
  const CLI::Option* o = args.compile.first_given();
  if (!o) o = args.pipeline.first_given();
  if (o)
    throw Error(fmt::format("{}: {} applies when compiling a model, and this is a compiled plan", args.model,
                            o->get_name()));
  if (!args.model_options.shapes.empty())
    throw Error(
        fmt::format("{}: --shape applies when compiling a model, and this is a compiled plan", args.model));
  return driver::train_plan(driver::read_training_plan(args.model), args.model, args.train);
}

void run_train(TrainArgs& args) {
  args.train.batch = args.model_options.batch;
  const bool tty = isatty(fileno(stdout));
  args.train.on_step = [tty](int64_t step, int64_t total, double loss, double sps) {
    print_progress(tty, step, total, loss, sps);
  };
  driver::TrainReport r;
  if (driver::is_plan_path(args.model)) {
    r = train_plan_file(args);
  } else {
    args.compile.check();
    args.model_options.apply(args.compile.options.compile);
    args.compile.options.compile.pipeline = args.pipeline.options;
    const driver::Compiled c = driver::compile_for_training(args.model, args.compile.options, args.train);
    if (PipelineFlags::print_if_stopped(c)) return;
    r = driver::train_plan(c.plan, args.model, args.train);
  }
  std::printf("trained %lld steps in %.2f s: %.1f samples/s, last loss %.6f\n", (long long)r.steps,
              r.train_seconds, r.samples_per_s, r.last_loss);
  std::printf("memory: %s\n", r.memory.c_str());
  if (r.skipped_steps > 0)
    std::printf("fp16 loss scaling skipped %lld of them (inf or NaN in the loss or gradients)\n",
                (long long)r.skipped_steps);
  if (!args.train.save.empty())
    std::printf("checkpoint at step %lld written to %s\n", (long long)(r.first_step + r.steps),
                args.train.save.c_str());
  if (!args.train.export_path.empty())
    std::printf("trained model written to %s\n", args.train.export_path.c_str());
  if (r.eval_accuracy)
    std::printf("eval: %lld samples, loss %.4f, accuracy %.2f%%\n", (long long)r.eval_samples, *r.eval_loss,
                100.0 * *r.eval_accuracy);
  else if (r.eval_loss)
    std::printf("eval: %lld samples, loss %.4f\n", (long long)r.eval_samples, *r.eval_loss);
}

}  // namespace

Action add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "Train an ONNX model or a training plan on .npz data");
  cmd->add_option("model", args->model, "MODEL.onnx, or PLAN.dlcplan from `dlc compile --train`")->required();
  args->model_options.add_to(cmd);
  args->compile.add_to(cmd);
  args->pipeline.add_to(cmd);
  driver::TrainOptions& t = args->train;
  driver::LrScheduleOptions& s = t.schedule;
  cmd->add_option("--data", t.data, ".npz with one array per model input plus the label")->required();
  cmd->add_option("--eval", t.eval_data, ".npz to report loss and accuracy on after training");
  cmd->add_option("--epochs", t.epochs, "passes over the data (default 1)");
  cmd->add_option("--steps", t.steps, "train until N optimizer steps in all, resumed ones included");
  cmd->add_flag("--shuffle", t.shuffle, "shuffle the rows every epoch");
  cmd->add_option("--seed", t.seed, "seed of the shuffle");
  cmd->add_option("--lr", s.lr, "learning rate, the peak of a schedule (default 0.01)");
  cmd->add_option("--lr-schedule", s.kind, "constant | cosine | step | linear (default constant)");
  cmd->add_option("--warmup-steps", s.warmup_steps, "raise the learning rate linearly from 0 over N steps");
  cmd->add_option("--step-size", s.step_size, "step schedule: multiply by --gamma every N steps");
  cmd->add_option("--gamma", s.gamma, "step schedule: the factor (default 0.1)");
  cmd->add_option("--min-lr", s.min_lr, "cosine/linear: the final learning rate (default 0)");
  cmd->add_option("--schedule-steps", s.total_steps,
                  "cosine/linear: decay over N steps (default: the run's total steps)");
  cmd->add_option("--save", t.save, "write a checkpoint to FILE at the end (and every --save-every steps)");
  cmd->add_option("--save-every", t.save_every, "also write the checkpoint every N steps");
  cmd->add_option("--resume", t.resume, "continue from a checkpoint written by --save");
  cmd->add_option("--log", t.log, "write one JSON object per step to FILE.jsonl");
  cmd->add_option("--export", t.export_path, "write the trained model to OUT.onnx");
  cmd->add_option("--threads", t.threads, "CPU threads (default: all cores)");
  cmd->add_flag("--cuda-graph", t.cuda_graph,
                "CUDA plans: capture a training step once as a CUDA Graph and replay it");
  cmd->add_flag("--cudnn-benchmark", t.cudnn_benchmark,
                "CUDA plans: time cuDNN's convolution algorithms once per shape at start (as PyTorch's "
                "cudnn.benchmark) instead of taking its heuristics' choice");
  return [args] { run_train(*args); };
}

}  // namespace dlc::tool
