// The device-side helpers at the top of every emitted kernel source: the 16-bit float headers,
// conversions between storage types and f32 (dlc_to_float / dlc_from_float<T>), 4-element vector
// loads and stores, and warp/block reductions. Only the parts a kernel asks for are emitted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct PreludeOptions {
  std::vector<DType> types;  // element types the kernel touches (f32, f16, bf16, bool, u8, i32, i64)
  bool vector_io = false;    // dlc_aligned4, dlc_load4, dlc_store4 for the float/bool types
  bool reductions = false;   // dlc_warp_sum/max, dlc_block_sum/max
};

std::string device_prelude(const PreludeOptions& options);

/// Device functions `warp`(v) and `block`(v, scratch) reducing a float over a warp or a 1-D block
/// (blockDim.x a multiple of 32; every thread calls and gets the result; scratch is 32 floats of
/// shared memory) by `combine`, an expression of floats a and b; lanes past the block's warps add
/// `identity`. The prelude's sums and maxima are these; ReduceProd's product too.
std::string warp_and_block_reduction(std::string_view warp, std::string_view block, std::string_view combine,
                                     std::string_view identity);

}  // namespace dlc::codegen::cuda
