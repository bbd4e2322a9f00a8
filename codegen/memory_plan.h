// Memory planning: offsets in one arena from the buffers' lifetimes over the step order.
#pragma once

#include <cstdint>
#include <vector>

namespace dlc::codegen {

struct BufferLifetime {
  int64_t bytes = 0;
  int first = 0;  // first step that touches it (0-based)
  int last = 0;   // last step that touches it (inclusive)
  /// Index of the buffer whose bytes this one shares at offset 0 (a view or an in-place
  /// result), or -1; that buffer has none itself and is at least as large.
  int alias_of = -1;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per buffer
  int64_t arena_bytes = 0;
  int64_t peak_bytes = 0;  // max over steps of the bytes live at that step
};

/// Greedy best fit, largest buffers first; buffers whose lifetimes overlap never overlap in
/// memory. Offsets are 64-byte aligned. A buffer and its aliases are placed as one, live over
/// the union of their lifetimes; the aliases get its offset and add no bytes to the peak.
MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers);

}  // namespace dlc::codegen
