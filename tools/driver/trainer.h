// The training loop behind `dlc train`: micro-batches from .npz data gathered on a worker thread,
// one plan run per micro-batch, the scheduled learning rate, the optimizer step (and with
// gradient accumulation whether to apply) fed as runtime scalars, checkpoints to save and
// resume, evaluation with an inference plan that receives the trained weights, and a
// JSON-lines log.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runtime/plan/plan.pb.h"
#include "tools/driver/lr_schedule.h"
#include "tools/driver/train_compile.h"

namespace dlc::driver {

/// fp16: this many steps in a row with a non-finite loss stop training. Backing off the loss scale
/// cures overflowing gradients, not a forward pass that overflows.
inline constexpr int64_t kMaxNonfiniteLossesInARow = 16;

struct TrainOptions {
  std::string data, eval_data;  // .npz files
  int64_t batch = 0;            // rows per micro-batch; 0: the plan's, or kDefaultBatch for a model
  int64_t epochs = 1;
  int64_t steps = 0;  // > 0: train until this many optimizer steps in all (overrides epochs)
  /// The schedule; its `lr` is --lr, and total_steps 0 means the run's total steps.
  LrScheduleOptions schedule;
  bool shuffle = false;
  uint64_t seed = 0;
  std::string log;          // JSON lines, one object per optimizer step
  std::string export_path;  // write the trained model as ONNX here (empty: do not)
  std::string save;         // checkpoint written at the end (and every save_every steps)
  int64_t save_every = 0;
  std::string resume;  // checkpoint to continue from
  int threads = 0;
  bool cuda_graph = false;       // CUDA plans: replay each step as a captured CUDA Graph
  bool cudnn_benchmark = false;  // CUDA plans: time cuDNN's convolution algorithms at start
  /// Called after every optimizer step with (step, total, loss, samples/s); the tool draws its
  /// progress with it.
  std::function<void(int64_t step, int64_t total, double loss, double samples_per_s)> on_step;
};

struct TrainReport {
  int64_t steps = 0;       // optimizer steps of this run (a resumed run counts from its checkpoint)
  int64_t first_step = 0;  // the step the run started from (0, or the checkpoint's)
  double last_loss = 0;    // mean over the micro-batches of the last step
  /// fp16: steps of this run the loss scaling skipped for an inf or NaN in the loss or gradients
  /// (they count as steps of the run and of the schedule, not as optimizer steps of Adam).
  int64_t skipped_steps = 0;
  double samples_per_s = 0;  // over all steps of this run, data copies included
  double train_seconds = 0;
  std::optional<double> eval_loss, eval_accuracy;
  int64_t eval_samples = 0;
  std::string memory;  // the training session's Session::memory_report()
};

/// Compiles `model_path` for training with the batch of `options` (kDefaultBatch when it gives
/// none), which the model must not fix otherwise; train_plan then trains the plan. With
/// --stop-after the result is `stopped` and has no plan.
Compiled compile_for_training(const std::string& model_path, TrainCompileOptions compile,
                              const TrainOptions& options);
/// Trains a compiled training plan (see train_compile.h and training_plan.h); `plan_name` names
/// it in messages. Throws dlc::Error on bad data, a bad checkpoint, or a loss that is not finite
/// (with fp16 loss scaling, such a step is skipped instead, unless the loss stays non-finite for
/// kMaxNonfiniteLossesInARow steps).
TrainReport train_plan(const plan::Plan& plan, const std::string& plan_name, const TrainOptions& options);

}  // namespace dlc::driver
