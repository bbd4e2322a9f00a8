// What a CUDA session allocates on its GPU, in one cudaMalloc: the plan's arena (laid out by the
// memory planner), the scratch shared by the steps (they run one at a time on one stream, so the
// largest kernel workspace or library workspace serves all), the multi-tensor tables of the
// optimizer launches, and a staging copy of every input so the next batch uploads while a step
// runs. Also the check that it fits, whose error says what would help. Pure arithmetic: tested
// without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/plan/plan.pb.h"

namespace dlc::cuda {

struct DeviceMemoryLayout {
  int64_t arena_bytes = 0;      // the plan's arena
  int64_t peak_bytes = 0;       // its planned peak of live bytes (reported, not allocated)
  int64_t workspace_bytes = 0;  // the largest kernel or library scratch
  int64_t table_bytes = 0;      // multi-tensor tables
  int64_t staging_bytes = 0;    // one copy of each input and label
  // Offsets of the regions in the allocation (256-byte aligned).
  int64_t workspace_offset = 0, table_offset = 0, staging_offset = 0;
  int64_t total_bytes = 0;

  /// "arena A (planned peak P), workspace W, tables T, input staging S: total N" in MiB.
  std::string describe() const;
};

/// The layout for `stage` of `plan` whose library calls need at most `library_workspace_bytes`.
DeviceMemoryLayout device_memory_layout(const plan::Plan& plan, const plan::Stage& stage,
                                        int64_t library_workspace_bytes);

/// Throws dlc::Error when `layout` needs more than `free_bytes` of `device`: what it needs, what
/// is free of the total, and the options that make a plan smaller (--precision, a smaller --batch
/// with --accumulate; dlc has no activation checkpointing or pipeline stages yet).
void check_device_fits(const DeviceMemoryLayout& layout, int64_t free_bytes, int64_t total_bytes,
                       const std::string& device);

}  // namespace dlc::cuda
