// A per-kernel profile of a session's steps: wall time and call count per kernel name (per step
// name with DLC_PROFILE=steps), printed as a table sorted by total time. Sessions keep one when
// DLC_PROFILE is set (not "0") and print it to stderr when they are destroyed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>

namespace dlc {

class StepProfile {
 public:
  /// True when the environment asks for profiles (DLC_PROFILE set and not "0").
  static bool requested();

  /// What a step's time is counted under: its kernel (op) name, or with DLC_PROFILE=steps its own.
  const std::string& key(const std::string& kernel, const std::string& step) const {
    return by_step_ ? step : kernel;
  }
  /// Counts one Session::run.
  void add_run() { ++runs_; }
  void add(const std::string& kernel, double seconds);
  /// A header (runs, ms per run) and one row per kernel: total ms, share, calls, µs per call,
  /// sorted by total time. Prints nothing when no run was counted.
  void print(std::FILE* out) const;

 private:
  struct Entry {
    double seconds = 0;
    int64_t calls = 0;
  };
  bool by_step_ = by_step();
  static bool by_step();
  std::unordered_map<std::string, Entry> entries_;
  int64_t runs_ = 0;
};

}  // namespace dlc
