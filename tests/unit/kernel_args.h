// The arguments of a kernel test's launch (cuda_test_util.h): by parameter name, a device pointer
// or an integer passed by value; and their binding to one entry's parameters.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "dlc/error.h"

namespace dlc::cuda::test {

using Arg = std::variant<void*, int, long long>;
using Args = std::map<std::string, Arg>;

/// The values of `entry`'s parameters in order: "workspace" and "workspace+N" (N bytes in) from
/// `workspace`, the others from `args`. Throws dlc::Error for a parameter `args` lacks.
inline std::vector<Arg> entry_args(const codegen::cuda::KernelEntry& entry, const Args& args,
                                   void* workspace) {
  std::vector<Arg> values;
  for (const std::string& p : entry.params) {
    if (p == "workspace") {
      values.emplace_back(workspace);
    } else if (p.rfind("workspace+", 0) == 0) {
      values.emplace_back(static_cast<void*>(static_cast<char*>(workspace) + std::stoll(p.substr(10))));
    } else {
      auto it = args.find(p);
      if (it == args.end()) throw Error("run_kernels: no argument '" + p + "' for " + entry.name);
      values.push_back(it->second);
    }
  }
  return values;
}

}  // namespace dlc::cuda::test
