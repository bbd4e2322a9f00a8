// Data-movement kernels where each output element copies one input element, found by an affine
// map of its coordinates, or a fill value: Slice (one source, start + step · o per axis), Pad
// (one source, o - pad_begin; out of range: the constant, the clamped edge or the reflection),
// Concat (one source per input, o - offset on the concatenation axis; the first source in range
// is read) and Transpose (one source whose axis d follows output axis out_axis[d]). Any storage type (f32,
// f16, bf16, bool, u8, i32, i64); the bytes are copied, never converted. Static shapes are constants of the
// source.
//
// Entry: (in0, …, inK-1, out0), one thread per output element, grid-stride.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct CopySource {
  Shape dims;                  // the input's dims (the output's rank)
  std::vector<int64_t> start;  // per input axis d: coordinate = start + step · o[out_axis[d]]
  std::vector<int64_t> step;
  std::vector<int64_t> out_axis;  // a permutation; empty: axis d follows output axis d
};

struct CopySpec {
  DType dtype = DType::F32;
  Shape out;
  std::vector<CopySource> sources;
  std::string mode = "constant";  // a coordinate out of range: "constant" (fill), "edge", "reflect"
  double fill = 0;                // constant mode: the value where no source is in range
};

/// Slice, Pad, Concat and Transpose as a copy (see the file comment). Throws dlc::Error for a spec
/// whose sources do not have the output's rank, an out_axis that is no permutation, an unknown
/// mode, or edge/reflect with several sources or an empty source axis.
KernelSource emit_copy(const CopySpec& spec);

}  // namespace dlc::codegen::cuda
