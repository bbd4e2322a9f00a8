// Options shared by the subcommands that compile an ONNX model: --batch and --shape.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "tools/driver/compile.h"

namespace dlc::tool {

struct ModelOptions {
  int64_t batch = 0;
  std::vector<std::string> shapes;  // NAME=D0,D1,…

  void add_to(CLI::App* cmd);
  /// Fills the import options; throws dlc::Error on a malformed --shape.
  void apply(driver::CompileOptions& options) const;
};

}  // namespace dlc::tool
