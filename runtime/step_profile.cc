// Per-kernel step profile (see step_profile.h).
#include "runtime/step_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace dlc {

namespace {

// DLC_PROFILE's value, "" when unset.
const char* profile_setting() {
  const char* v = std::getenv("DLC_PROFILE");
  return v ? v : "";
}

}  // namespace

bool StepProfile::requested() {
  const char* v = profile_setting();
  return *v && std::strcmp(v, "0") != 0;
}

bool StepProfile::by_step() { return std::strcmp(profile_setting(), "steps") == 0; }

void StepProfile::add(const std::string& kernel, double seconds) {
  Entry& e = entries_[kernel];
  e.seconds += seconds;
  ++e.calls;
}

void StepProfile::print(std::FILE* out) const {
  if (runs_ == 0) return;
  std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
  double total = 0;
  for (const auto& [name, e] : rows) total += e.seconds;
  fmt::print(out, "dlc profile: {} runs, {:.3f} ms of kernels per run\n", runs_, 1e3 * total / double(runs_));
  fmt::print(out, "  {:<28s} {:>10s} {:>7s} {:>8s} {:>10s}\n", by_step_ ? "step" : "kernel", "total ms",
             "share", "calls", "us/call");
  for (const auto& [name, e] : rows)
    fmt::print(out, "  {:<28s} {:>10.2f} {:>6.1f}% {:>8d} {:>10.1f}\n", name, 1e3 * e.seconds,
               total > 0 ? 100 * e.seconds / total : 0.0, e.calls, 1e6 * e.seconds / double(e.calls));
}

}  // namespace dlc
