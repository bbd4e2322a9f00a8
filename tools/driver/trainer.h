// The training loop behind `dlc train`: batches from .npz data, one plan run per step, the
// learning rate and step count fed as runtime scalars, evaluation with an inference plan that
// receives the trained weights, and a JSON-lines log.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "dlc/session.h"
#include "tools/driver/train_compile.h"

namespace dlc::driver {

struct TrainOptions {
  std::string data, eval_data;  // .npz files
  int64_t batch = 32;
  int64_t epochs = 1;
  int64_t steps = 0;  // > 0: stop after this many steps (overrides epochs)
  double lr = 0.01;
  bool shuffle = false;
  uint64_t seed = 0;
  std::string log;          // JSON lines, one object per step
  std::string export_path;  // write the trained model as ONNX here (empty: do not)
  int threads = 0;
  /// Called after every step with (step, loss, samples/s); the tool draws its progress with it.
  std::function<void(int64_t step, int64_t total, double loss, double samples_per_s)> on_step;
};

struct TrainReport {
  int64_t steps = 0;
  double last_loss = 0;
  double samples_per_s = 0;  // over all steps, data copies included
  double train_seconds = 0;
  std::optional<double> eval_loss, eval_accuracy;
  int64_t eval_samples = 0;
};

/// Trains `model_path` compiled with `compile` on `options.data`; throws dlc::Error on bad data.
TrainReport train(const std::string& model_path, TrainCompileOptions compile, const TrainOptions& options);

}  // namespace dlc::driver
