// Training-mode Dropout with the CPU kernel's Philox4x32-10 stream (runtime/cpu/philox.h, whose
// text the kernel source embeds): element i keeps x · scale where the uniform of lane i % 4 of the
// block for counter {i / 4, offset} under key `seed` is >= ratio, else 0; scale is 1 / (1 -
// ratio) rounded to the storage type, the product rounded once, as the CPU kernel does. The
// optional offset (the training step) is an integer or float scalar read from device memory.
//
// Entry: (x, [offset,] y, [mask]), one thread per 4-element block, grid-stride.
#pragma once

#include <cstdint>
#include <optional>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct DropoutSpec {
  DType dtype = DType::F32;  // x and y: f32, f16, bf16
  int64_t numel = 0;
  double ratio = 0.5;
  uint64_t seed = 0;
  bool mask = false;                  // a bool mask output
  std::optional<DType> offset_dtype;  // the offset input, when present
};

KernelSource emit_dropout(const DropoutSpec& spec);

}  // namespace dlc::codegen::cuda
