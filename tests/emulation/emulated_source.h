// The C++ that runs an emitted kernel source emulated (cuda_shim.h): the source in a namespace of
// its own with a shared-memory buffer, and `run(void** a)` launching its entries in order, each
// parameter passed as the expression `argument(param)` gives (a cast of some a[i]).
#pragma once

#include <functional>
#include <string>

#include "codegen/cuda/kernel_source.h"

namespace dlc::emulation {

inline std::string emulated(const codegen::cuda::KernelSource& ks, const std::string& ns,
                            const std::function<std::string(const std::string& param)>& argument) {
  std::string s = "namespace " + ns + " {\nalignas(128) unsigned char dlc_smem[kSharedBytes];\n" + ks.source;
  s += "\nvoid run(void** a) {\n";
  for (const codegen::cuda::KernelEntry& e : ks.entries) {
    s += "  launch(" + std::to_string(e.launch.grid[0]) + ", " + std::to_string(e.launch.block[0]) +
         ", dlc_smem, " + std::to_string(e.launch.shared_bytes) + ", [&] { " + e.name + "(";
    for (size_t i = 0; i < e.params.size(); ++i) s += (i ? ", " : "") + argument(e.params[i]);
    s += "); });\n";
  }
  return s + "}\n}  // namespace " + ns + "\n";
}

}  // namespace dlc::emulation
