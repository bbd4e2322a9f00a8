// The emulated attention kernels' launchers by spec (attention_specs.h), registered by the
// generated sources (write_attention_sources.cc). A launcher takes the device buffers q, k, v, o,
// lse, dout, workspace, dq, dk, dv (host memory here), in that order.
#pragma once

#include <map>
#include <utility>

namespace dlc::emulation {

using Launcher = void (*)(void** buffers);

inline std::map<int, std::pair<Launcher, Launcher>>& attention_launchers() {
  static std::map<int, std::pair<Launcher, Launcher>> launchers;
  return launchers;
}

inline bool register_attention(int spec, Launcher forward, Launcher backward) {
  attention_launchers()[spec] = {forward, backward};
  return true;
}

}  // namespace dlc::emulation
