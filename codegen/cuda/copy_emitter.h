// Data-movement kernels where each output element copies one input element, found by an affine
// map of its coordinates, or a fill value: Slice (one source, start + step · o per axis), Pad
// (one source, o - pad_begin; out of range: the constant, the clamped edge or the reflection),
// Concat (one source per input, o - offset on the concatenation axis; the first source in range
// is read), Transpose (one source whose axis d follows output axis out_axis[d]), Tile (one source
// whose coordinates wrap around), SliceGrad (one source read where (o - start) / step is a whole
// number in range: a divisor per axis) and Split (several kernels in one source, each a slice of
// the same input writing an output of its own); Trilu is a copy read only inside a band of the
// last two output axes (col - row >= band_k above the diagonal, <= band_k below). Any storage type (f32, f16,
// bf16, bool, u8, i32, i64); the bytes are copied, never converted. Static shapes are constants of the
// source.
//
// Entry: (in0, …, inK-1, outJ), one thread per output element, grid-stride; J is 0, or the
// output's index among emit_copies' specs.
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
  std::vector<int64_t> start;  // per input axis d: coordinate = (start + step · o[out_axis[d]]) / divisor
  std::vector<int64_t> step;
  std::vector<int64_t> out_axis;  // a permutation; empty: axis d follows output axis d
  std::vector<int64_t> divisor;   // positive, read only where it divides; empty: 1 on every axis
};

struct CopySpec {
  DType dtype = DType::F32;
  Shape out;
  std::vector<CopySource> sources;
  std::string mode = "constant";  // a coordinate out of range: "constant" (fill), "edge", "reflect", "wrap"
  double fill = 0;                // constant mode: the value where no source is in range
  int band = 0;                   // 1: read where col - row >= band_k, -1: where <= band_k (Trilu)
  int64_t band_k = 0;             // (row, col: the last two output axes); 0: no band
};

/// Slice, Pad, Concat, Transpose, Tile, SliceGrad and Trilu as a copy (see the file comment). Throws
/// dlc::Error for a spec whose sources do not have the output's rank, an out_axis that is no
/// permutation, a divisor below 1, an unknown mode, or edge/reflect/wrap with several sources, an
/// empty source axis or a divisor, and a band below rank 2 or outside constant mode.
KernelSource emit_copy(const CopySpec& spec);

/// Several copies reading the same sources, in one source with one kernel each; the k-th writes
/// out<k> (Split). Throws as emit_copy does, and for no spec or specs of different storage types.
KernelSource emit_copies(const std::vector<CopySpec>& specs);

}  // namespace dlc::codegen::cuda
