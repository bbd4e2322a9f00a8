// The alignment of a plan's buffers: each starts at an offset into the arena that is a multiple of
// kBufferAlignment bytes (codegen/memory_plan.cc lays them out so; a Reshape view shares its
// root's offset), and the arena itself is at least as aligned. The CUDA runtime tells cuBLASLt
// this, so that the algorithms it picks accept such operands.
#pragma once

#include <cstdint>

namespace dlc::plan {

constexpr int64_t kBufferAlignment = 64;

}  // namespace dlc::plan
