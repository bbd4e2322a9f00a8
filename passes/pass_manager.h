// The pass manager: runs a pipeline of passes over one graph, verifies the IR after each, and
// carries the user's pipeline flags — disable a pass, print or dump the IR after passes, stop
// after a named or the N-th pass — the same way for `dlc compile`, `dlc train` and `dlc opt`.
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace dlc::passes {

/// Debug builds verify the IR after every pass unless told otherwise; release builds when asked
/// (--verify-each), as the tests do.
#ifdef NDEBUG
inline constexpr bool kVerifyEachByDefault = false;
#else
inline constexpr bool kVerifyEachByDefault = true;
#endif

struct PipelineOptions {
  std::vector<std::string> disabled;     // --disable-pass NAME (repeatable)
  bool print_after_all = false;          // --print-ir-after-all
  std::vector<std::string> print_after;  // --print-ir-after PASS (repeatable)
  std::string dump_dir;                  // --dump-ir DIR: DIR/NN-PASS.dlir after each pass
  /// --stop-after PASS: run the passes up to the first one called PASS, or up to the N-th when it
  /// is a number N (the numbers of --print-ir-after-all and --dump-ir); empty: all.
  std::string stop_after;
  bool verify_each = kVerifyEachByDefault;  // ir::verify after every pass
};

/// What one pass did in the last run.
struct PassRecord {
  std::string name;
  bool ran = false;  // false: disabled, or after the stop
  bool changed = false;
  double seconds = 0;
  std::map<std::string, int64_t> stats;
};

class PassManager {
 public:
  /// Printed IR goes to `print_to` (the tools pass stderr, keeping stdout for results).
  explicit PassManager(PipelineOptions options, std::ostream& print_to);

  /// Appends a pass. A required pass (the training pipeline's loss, autodiff, optimizer) cannot
  /// be disabled: asking to is an error.
  void add(std::unique_ptr<Pass> pass, bool required = false);

  /// Runs the pipeline; throws dlc::Error naming the pass whose output fails verification, or a
  /// pass name in the options that is not in the pipeline. Returns false when --stop-after ended
  /// the run (even at the last pass): the caller then shows the IR rather than going on.
  bool run(ir::Graph& graph);

  /// Throws dlc::Error for an option naming a pass not in the pipeline, a disabled required
  /// pass, or a bad --stop-after; run() checks first too.
  void check_options() const;

  const std::vector<PassRecord>& records() const { return records_; }
  /// Passes in pipeline order, for messages and `--help`.
  std::vector<std::string> pass_names() const;

 private:
  /// How many passes run: all, or those up to --stop-after.
  size_t passes_to_run() const;
  void after_pass(const ir::Graph& graph, size_t index, const std::string& name) const;

  PipelineOptions options_;
  std::ostream& print_to_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<bool> required_;
  std::vector<PassRecord> records_;
};

}  // namespace dlc::passes
