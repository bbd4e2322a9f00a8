// Reduction kernels: y[o, i] = op over e of x[o, e, i] (sum, mean, max; f32 accumulation).
// inner == 1 reduces contiguous rows (one warp or block per row, 4-wide loads when aligned);
// inner > 1 reduces columns with 32 x 8 blocks, split over the reduced axis into a workspace
// when there are too few columns to fill the GPU.
//
// Entries: (x, y); or, split: [partial](x, workspace) then [final](workspace, y).
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

enum class ReduceOp { Sum, Mean, Max };

struct ReduceSpec {
  ReduceOp op = ReduceOp::Sum;
  DType dtype = DType::F32;  // x and y
  int64_t outer = 1, extent = 1, inner = 1;
};

KernelSource emit_reduce(const ReduceSpec& spec);

}  // namespace dlc::codegen::cuda
