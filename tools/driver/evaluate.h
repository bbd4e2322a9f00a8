// Evaluation after training (`--eval DATA`): the inference plan of the model a training plan was
// compiled from, loaded with the trained parameters and running statistics, scored with
// cross-entropy and accuracy of its first output against the data's label array.
#pragma once

#include <string>

#include "dlc/session.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::driver {

struct EvalReport {
  double loss = 0, accuracy = 0;
  int64_t samples = 0;  // whole batches only
};

/// Throws dlc::Error naming `data_path` and the array on bad data.
EvalReport evaluate(const plan::TrainingInfo& info, const Session& trained, const std::string& data_path,
                    int threads);

}  // namespace dlc::driver
