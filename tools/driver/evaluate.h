// Evaluation after training (`--eval DATA`): the inference plan of the model a training plan was
// compiled from, loaded with the trained parameters and running statistics, scored against the
// data's label array with the plan's loss (cross_entropy: mean cross-entropy and top-1 accuracy;
// bce_logits: mean binary cross-entropy and accuracy of the sign; mse, l1: the mean error only).
#pragma once

#include <optional>
#include <string>

#include "dlc/session.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::driver {

struct EvalReport {
  double loss = 0;
  std::optional<double> accuracy;  // none for regression losses
  int64_t samples = 0;             // whole batches only
};

/// Throws dlc::Error naming `data_path` and the array on bad data.
EvalReport evaluate(const plan::TrainingInfo& info, const Session& trained, const std::string& data_path,
                    int threads);

}  // namespace dlc::driver
