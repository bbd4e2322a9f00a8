// The pass-pipeline flags shared by `dlc compile`, `dlc train` and `dlc opt`:
// --disable-pass, --print-ir-after-all, --print-ir-after, --dump-ir, --stop-after.
#pragma once

#include <CLI/CLI.hpp>

#include "passes/pass_manager.h"

namespace dlc::tool {

/// Registers the flags on `cmd`, writing into `options`.
void add_pipeline_flags(CLI::App* cmd, passes::PipelineOptions& options);

}  // namespace dlc::tool
