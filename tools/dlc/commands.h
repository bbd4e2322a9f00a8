// The dlc subcommands: each registers its options on the CLI11 app and returns the action to
// run when it is chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace dlc::tool {

using Action = std::function<void()>;

Action add_compile_command(CLI::App& app);
Action add_run_command(CLI::App& app);
Action add_train_command(CLI::App& app);
Action add_inspect_command(CLI::App& app);
Action add_opt_command(CLI::App& app);
Action add_export_command(CLI::App& app);

}  // namespace dlc::tool
