// Learning-rate schedules, computed on the host and fed to the plan as the "lr" scalar each
// optimizer step: constant, cosine and linear decay to a minimum (as Hugging Face's
// get_{constant,cosine,linear}_schedule_with_warmup, min_lr as in its
// get_cosine_with_min_lr_schedule_with_warmup) and PyTorch's StepLR, each with an optional
// linear warmup from 0.
#pragma once

#include <cstdint>
#include <string>

namespace dlc::driver {

struct LrScheduleOptions {
  std::string kind = "constant";  // constant | cosine | step | linear
  double lr = 0.01;               // the base (peak) learning rate
  double min_lr = 0;              // cosine/linear end here; step does not go below it
  int64_t warmup_steps = 0;       // lr rises linearly from 0 over these steps
  int64_t step_size = 0;          // step: multiply by gamma every step_size steps
  double gamma = 0.1;
  int64_t total_steps = 0;  // cosine/linear: the steps over which they decay (after warmup)
};

class LrSchedule {
 public:
  /// Checks the options; throws dlc::Error naming the offending option.
  explicit LrSchedule(LrScheduleOptions options);
  /// The learning rate of the optimizer step with 0-based index `step`.
  double at(int64_t step) const;
  /// The options that decide the values, as text (stored in checkpoints to detect a change).
  std::string describe() const;

 private:
  LrScheduleOptions o_;
};

}  // namespace dlc::driver
