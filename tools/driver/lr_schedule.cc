// Learning-rate schedules.
#include "tools/driver/lr_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "dlc/error.h"

namespace dlc::driver {

LrSchedule::LrSchedule(LrScheduleOptions options) : o_(std::move(options)) {
  const std::string& k = o_.kind;
  if (k != "constant" && k != "cosine" && k != "step" && k != "linear")
    throw Error(fmt::format("--lr-schedule '{}': expected constant, cosine, step or linear", k));
  if (!(o_.lr >= 0) || !std::isfinite(o_.lr))
    throw Error(fmt::format("--lr {} must be a finite number >= 0", o_.lr));
  if (o_.warmup_steps < 0) throw Error(fmt::format("--warmup-steps {} must be >= 0", o_.warmup_steps));
  if (!(o_.min_lr >= 0) || o_.min_lr > o_.lr)
    throw Error(fmt::format("--min-lr {} must lie in [0, --lr {}]", o_.min_lr, o_.lr));
  if (k == "step" && o_.step_size <= 0)
    throw Error(fmt::format("--lr-schedule step needs --step-size > 0, got {}", o_.step_size));
  if (k == "step" && !(o_.gamma > 0)) throw Error(fmt::format("--gamma {} must be positive", o_.gamma));
  if ((k == "cosine" || k == "linear") && o_.total_steps <= 0)
    throw Error(fmt::format("--lr-schedule {} needs a positive number of steps, got {}", k, o_.total_steps));
}

double LrSchedule::at(int64_t step) const {
  if (step < o_.warmup_steps) return o_.lr * double(step) / double(std::max<int64_t>(1, o_.warmup_steps));
  const int64_t after_warmup = step - o_.warmup_steps;
  const double span = double(std::max<int64_t>(1, o_.total_steps - o_.warmup_steps));
  const double progress = std::clamp(double(after_warmup) / span, 0.0, 1.0);
  if (o_.kind == "cosine")
    return o_.min_lr + (o_.lr - o_.min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  if (o_.kind == "linear") return o_.min_lr + (o_.lr - o_.min_lr) * (1.0 - progress);
  if (o_.kind == "step")
    return std::max(o_.min_lr, o_.lr * std::pow(o_.gamma, double(after_warmup / o_.step_size)));
  return o_.lr;
}

std::string LrSchedule::describe() const {
  std::string s = fmt::format("{} lr={} warmup={}", o_.kind, o_.lr, o_.warmup_steps);
  if (o_.kind == "step")
    s += fmt::format(" step_size={} gamma={} min_lr={}", o_.step_size, o_.gamma, o_.min_lr);
  if (o_.kind == "cosine" || o_.kind == "linear")
    s += fmt::format(" total={} min_lr={}", o_.total_steps, o_.min_lr);
  return s;
}

}  // namespace dlc::driver
