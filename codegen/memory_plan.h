// Memory planning: offsets in one arena from the buffers' lifetimes over the step order.
#pragma once

#include <cstdint>
#include <vector>

namespace dlc::codegen {

struct BufferLifetime {
  int64_t bytes = 0;
  int first = 0;  // first step that touches it (0-based)
  int last = 0;   // last step that touches it (inclusive)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per buffer
  int64_t arena_bytes = 0;
  int64_t peak_bytes = 0;  // max over steps of the bytes live at that step
};

/// Greedy best fit, largest buffers first; buffers whose lifetimes overlap never overlap in
/// memory. Offsets are 64-byte aligned.
MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers);

}  // namespace dlc::codegen
