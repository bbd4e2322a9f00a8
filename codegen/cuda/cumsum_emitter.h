// CumSum over one axis of [outer, extent, inner]: one thread per (outer, inner) line scanning the
// axis in order (reverse: from the end; exclusive: each result leaves out its own element), the
// running sum in double for f32 and in 64-bit integers for i32/i64, rounded to the storage type at
// each store, as the CPU kernel does; so the results are the CPU's. Meant for position ids and
// masks, not for speed: a line is one thread's work (coalesced across threads when inner > 1).
//
// Entry: (in0, out0).
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/attributes.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct CumSumSpec {
  DType dtype = DType::F32;  // f32, i32 or i64 (the CPU kernel's float and index types)
  int64_t outer = 1, extent = 1, inner = 1;
  bool exclusive = false, reverse = false;
};

/// The spec of CumSum (attributes axis, exclusive, reverse) on `x`. Throws dlc::Error for an axis
/// out of range.
CumSumSpec cumsum_spec(const Attrs& attrs, const TensorType& x);

/// Throws dlc::Error for another dtype.
KernelSource emit_cumsum(const CumSumSpec& spec);

}  // namespace dlc::codegen::cuda
