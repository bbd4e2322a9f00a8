// ArgMax / ArgMin (and TopKIndices, below) over one axis of [outer, extent, inner]: the index (int64) of the
// first (or, with select_last_index, the last) extremum, one thread per result scanning the axis in order
// with the CPU kernel's comparison, so the result is the CPU's in every case (a NaN is never
// better, so one at index 0 stays the result and later ones are passed over). 16-bit values are
// compared as f32 (exact). Meant for metrics and inference, not for speed: a thread reads its
// row alone (coalesced across threads when inner > 1).
//
// Entry: (x, y).
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct ArgExtremumSpec {
  DType dtype = DType::F32;  // x: f32, f16 or bf16
  bool max = true;           // ArgMax, else ArgMin
  bool last = false;         // select_last_index
  int64_t outer = 1, extent = 1, inner = 1;
};

KernelSource emit_arg_extremum(const ArgExtremumSpec& spec);

/// TopKIndices over the middle axis of [outer, extent, inner] (y: [outer, k, inner], int64): one
/// thread per line finds the k positions in order, each the best one ranked after the last found,
/// with the CPU kernel's order (value, then the lower position; NaN the largest), so the result is
/// the CPU's. O(k x extent) a line: for small k.
struct TopKSpec {
  DType dtype = DType::F32;  // x: f32, f16 or bf16
  bool largest = true;
  int64_t k = 1;
  int64_t outer = 1, extent = 1, inner = 1;
};

KernelSource emit_top_k_indices(const TopKSpec& spec);

}  // namespace dlc::codegen::cuda
