// The emulated kernels' launchers by case (op_cases.h), registered by the generated sources
// (write_op_sources.cc). A launcher takes the inputs' buffers from slot 0 and the outputs' from
// slot kOpOutputSlot (host memory here).
#pragma once

#include <map>

namespace dlc::emulation {

constexpr int kOpOutputSlot = 8;

using OpLauncher = void (*)(void** buffers);

inline std::map<int, OpLauncher>& op_launchers() {
  static std::map<int, OpLauncher> launchers;
  return launchers;
}

inline bool register_op(int index, OpLauncher launcher) {
  op_launchers()[index] = launcher;
  return true;
}

}  // namespace dlc::emulation
