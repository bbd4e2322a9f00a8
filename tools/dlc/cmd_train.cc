// `dlc train MODEL.onnx --data DATA.npz [options]`: compiles a training plan and trains it.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "tools/dlc/commands.h"
#include "tools/dlc/model_options.h"
#include "tools/driver/trainer.h"

namespace dlc::tool {

namespace {

struct TrainArgs {
  std::string model;
  ModelOptions model_options;
  driver::TrainCompileOptions compile;
  driver::TrainOptions train;
};

void run_train(TrainArgs& args) {
  args.model_options.apply(args.compile.compile);
  if (args.model_options.batch > 0) args.train.batch = args.model_options.batch;
  const bool tty = isatty(fileno(stdout));
  args.train.on_step = [tty](int64_t step, int64_t total, double loss, double sps) {
    if (tty) {
      const int width = 30, done = int(width * step / std::max<int64_t>(total, 1));
      std::printf("\r[%s%s] step %lld/%lld  loss %.4f  %.0f samples/s ",
                  std::string(size_t(done), '#').c_str(), std::string(size_t(width - done), ' ').c_str(),
                  (long long)step, (long long)total, loss, sps);
      if (step == total) std::printf("\n");
      std::fflush(stdout);
    } else if (step == 1 || step % 100 == 0 || step == total) {
      std::printf("step %lld/%lld loss %.6f samples/s %.1f\n", (long long)step, (long long)total, loss, sps);
    }
  };
  driver::TrainReport r = driver::train(args.model, args.compile, args.train);
  std::printf("trained %lld steps in %.2f s: %.1f samples/s, last loss %.6f\n", (long long)r.steps,
              r.train_seconds, r.samples_per_s, r.last_loss);
  if (!args.train.export_path.empty())
    std::printf("trained model written to %s\n", args.train.export_path.c_str());
  if (r.eval_accuracy)
    std::printf("eval: %lld samples, loss %.4f, accuracy %.2f%%\n", (long long)r.eval_samples, *r.eval_loss,
                100.0 * *r.eval_accuracy);
}

}  // namespace

Action add_train_command(CLI::App& app) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand("train", "Train an ONNX model on .npz data");
  cmd->add_option("model", args->model, "MODEL.onnx")->required();
  args->model_options.add_to(cmd);
  auto& t = args->train;
  auto& c = args->compile;
  cmd->add_option("--data", t.data, ".npz with one array per model input plus the label")->required();
  cmd->add_option("--eval", t.eval_data, ".npz to report loss and accuracy on after training");
  cmd->add_option("--epochs", t.epochs, "passes over the data (default 1)");
  cmd->add_option("--steps", t.steps, "stop after N steps (overrides --epochs)");
  cmd->add_flag("--shuffle", t.shuffle, "shuffle the rows every epoch");
  cmd->add_option("--seed", t.seed, "seed of the shuffle");
  cmd->add_option("--log", t.log, "write one JSON object per step to FILE.jsonl");
  cmd->add_option("--export", t.export_path, "write the trained model to OUT.onnx");
  cmd->add_option("--threads", t.threads, "CPU threads (default: all cores)");
  cmd->add_option("--lr", t.lr, "learning rate (default 0.01)");
  cmd->add_option("--loss", c.loss.kind, "cross_entropy | mse | l1 | output (default cross_entropy)");
  cmd->add_option("--output", c.loss.output, "the model output the loss applies to (default: the first)");
  cmd->add_option("--label", c.loss.label, "name of the label array (default: label)");
  cmd->add_option("--optimizer", c.optimizer.kind, "sgd | adam | adamw (default sgd)");
  cmd->add_option("--momentum", c.optimizer.momentum, "SGD momentum (default 0)");
  cmd->add_flag("--nesterov", c.optimizer.nesterov, "Nesterov momentum");
  cmd->add_option("--weight-decay", c.optimizer.weight_decay, "weight decay (default 0)");
  cmd->add_option("--beta1", c.optimizer.beta1, "Adam beta1 (default 0.9)");
  cmd->add_option("--beta2", c.optimizer.beta2, "Adam beta2 (default 0.999)");
  cmd->add_option("--eps", c.optimizer.eps, "Adam epsilon (default 1e-8)");
  cmd->add_option("--freeze", c.freeze, "regex of parameter names to keep fixed");
  return [args] { run_train(*args); };
}

}  // namespace dlc::tool
