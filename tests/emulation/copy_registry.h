// The emulated copy kernels' launchers by case (copy_cases.h), registered by the generated sources
// (write_copy_sources.cc). A launcher takes the inputs' buffers from slot 0 and the outputs' from
// slot kCopyOutputSlot (host memory here).
#pragma once

#include <map>

namespace dlc::emulation {

constexpr int kCopyOutputSlot = 8;

using CopyLauncher = void (*)(void** buffers);

inline std::map<int, CopyLauncher>& copy_launchers() {
  static std::map<int, CopyLauncher> launchers;
  return launchers;
}

inline bool register_copy(int index, CopyLauncher launcher) {
  copy_launchers()[index] = launcher;
  return true;
}

}  // namespace dlc::emulation
