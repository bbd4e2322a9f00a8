// What every CUDA kernel emitter returns: one CUDA C++ translation unit and the kernels in it to
// launch, in order, each with its launch configuration and parameter list. Pure data — compiling
// (NVRTC) and launching belong to runtime/cuda.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::codegen::cuda {

/// Rounds `bytes` up to a multiple of 256: the alignment of workspace sub-buffers, and of the CUDA
/// session's device regions (runtime/cuda/device_memory.h).
inline int64_t align256(int64_t bytes) { return (bytes + 255) / 256 * 256; }

/// Grid and block sizes (x, y, z) and dynamic shared memory of one launch.
struct LaunchConfig {
  int64_t grid[3] = {1, 1, 1};
  int block[3] = {1, 1, 1};
  int shared_bytes = 0;
};

/// A 1-D launch: `grid` blocks of `block` threads.
inline LaunchConfig launch_1d(int64_t grid, int block) {
  LaunchConfig c;
  c.grid[0] = grid;
  c.block[0] = block;
  return c;
}

/// One __global__ function of the source. Parameters are device pointers unless the emitter's
/// header says otherwise; "workspace" is the scratch of KernelSource::workspace_bytes and
/// "workspace+N" the address N bytes into it.
struct KernelEntry {
  std::string name;  // extern "C" symbol, deterministic
  LaunchConfig launch;
  std::vector<std::string> params;  // parameter names in order (for lowering and messages)
};

struct KernelSource {
  std::string kind;                  // "softmax_fwd", "elementwise", …
  std::string name;                  // "dlc_KIND_DTYPE_DETAIL.cu"; every entry's name starts with it
  std::string source;                // a complete CUDA C++ translation unit (NVRTC, sm_90)
  std::vector<KernelEntry> entries;  // launched in this order
  int64_t workspace_bytes = 0;       // device scratch shared by the entries (256-byte aligned)

  /// A source of `kind` with no entries yet, whose kernels are named `base`… in `base`.cu.
  static KernelSource named(std::string kind, const std::string& base, std::string source = {}) {
    KernelSource ks;
    ks.kind = std::move(kind);
    ks.name = base + ".cu";
    ks.source = std::move(source);
    return ks;
  }

  std::vector<std::string> kernel_names() const {
    std::vector<std::string> names;
    for (const KernelEntry& e : entries) names.push_back(e.name);
    return names;
  }
};

}  // namespace dlc::codegen::cuda
