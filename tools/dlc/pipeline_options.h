// The pass-pipeline flags shared by `dlc compile`, `dlc train` and `dlc opt`:
// --print-ir-after-all, --print-ir-after PASS, --disable-pass PASS, --dump-ir DIR,
// --stop-after PASS and --verify-each (passes::PipelineOptions).
#pragma once

#include <CLI/CLI.hpp>
#include <vector>

#include "passes/pass_manager.h"
#include "tools/driver/compile.h"

namespace dlc::tool {

struct PipelineFlags {
  passes::PipelineOptions options;

  void add_to(CLI::App* cmd);
  /// The first of these flags given on the command line, or null.
  const CLI::Option* first_given() const;
  /// When --stop-after ended the passes, prints the IR at that point on stdout and returns true:
  /// the command then writes nothing else.
  static bool print_if_stopped(const driver::Compiled& compiled);

 private:
  std::vector<const CLI::Option*> registered_;
};

}  // namespace dlc::tool
