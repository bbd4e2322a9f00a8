// ArgMax / ArgMin over one axis of [outer, extent, inner]: the index (int64) of the first (or,
// with select_last_index, the last) extremum, one thread per result scanning the axis in order
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

}  // namespace dlc::codegen::cuda
