// --batch / --shape parsing.
#include "tools/dlc/model_options.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::tool {

void ModelOptions::add_to(CLI::App* cmd) {
  cmd->add_option("--batch", batch, "bind the symbolic batch (leading) dimension of the inputs");
  cmd->add_option("--shape", shapes, "NAME=D0,D1,… bind an input's full shape");
}

void ModelOptions::apply(driver::CompileOptions& options) const {
  options.import.batch = batch;
  for (const std::string& s : shapes) {
    auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(fmt::format("--shape '{}': expected NAME=D0,D1,…", s));
    Shape dims;
    std::string rest = s.substr(eq + 1);
    for (size_t pos = 0; pos <= rest.size();) {
      size_t comma = rest.find(',', pos);
      if (comma == std::string::npos) comma = rest.size();
      std::string item = rest.substr(pos, comma - pos);
      size_t used = 0;
      int64_t d = -1;
      try {
        d = std::stoll(item, &used);
      } catch (const std::exception&) {
      }
      if (used != item.size() || d < 0)
        throw Error(fmt::format("--shape '{}': dimensions must be non-negative integers", s));
      dims.push_back(d);
      pos = comma + 1;
    }
    options.import.shapes[s.substr(0, eq)] = dims;
  }
}

}  // namespace dlc::tool
