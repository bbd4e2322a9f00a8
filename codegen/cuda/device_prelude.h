// The device-side helpers at the top of every emitted kernel source: the 16-bit float headers,
// conversions between storage types and f32 (dlc_to_float / dlc_from_float<T>), 4-element vector
// loads and stores, and warp/block reductions. Only the parts a kernel asks for are emitted.
#pragma once

#include <string>
#include <vector>

#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct PreludeOptions {
  std::vector<DType> types;  // element types the kernel touches (f32, f16, bf16, bool, u8, i32, i64)
  bool vector_io = false;    // dlc_aligned4, dlc_load4, dlc_store4 for the float/bool types
  bool reductions = false;   // dlc_warp_sum/max, dlc_block_sum/max
};

std::string device_prelude(const PreludeOptions& options);

}  // namespace dlc::codegen::cuda
