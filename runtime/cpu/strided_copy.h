// Strided element copies for the data-movement kernels and their gradients: unit dims dropped,
// contiguous dims merged, inner runs copied with memcpy when contiguous on both sides, outer rows
// in parallel.
#pragma once

#include "dlc/tensor.h"

namespace dlc::cpu {

/// Below this many bytes a copy stays on one thread.
inline constexpr int64_t kParallelCopyBytes = int64_t(1) << 16;

/// Element strides of a contiguous row-major tensor of `dims`.
Shape row_major_strides(const Shape& dims);

/// out[Σ i_d·os_d] = in[Σ i_d·is_d] for every index i of `dims` (strides in elements, any sign).
void strided_copy(DType dtype, const Shape& dims, void* out, const Shape& os, const void* in,
                  const Shape& is);

/// `in` (contiguous, `in_dims`) transposed by `perm` (non-negative) into contiguous `out`: out's
/// dim i is in's dim perm[i].
void transposed_copy(DType dtype, const Shape& in_dims, const void* in, const Shape& perm, void* out);

}  // namespace dlc::cpu
