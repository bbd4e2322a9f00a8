// Reduction kernels: y[o, i] = op over e of x[o, e, i] (sum, mean, max, min, L1, L2, sum of
// squares, log of the sum; f32 accumulation).
// inner == 1 reduces contiguous rows (one warp or block per row, 4-wide loads when aligned);
// inner > 1 reduces columns with 32 x 8 blocks, split over the reduced axis into a workspace
// when there are too few columns to fill the GPU. Reduced axes that are not adjacent (a
// convolution bias gradient sums [N, C, H, W] over N, H and W) are gathered: each result is a row
// kernel's row whose elements are found through the merged dims.
//
// Entries: (x, y); or, split: [partial](x, workspace) then [final](workspace, y).
//
// Fused (FusedReduce): with a prologue, x is that expression program's f32 output 0, computed
// where the kernel reads it (elementwise_emitter.h's program_source; no 4-wide path) and never
// stored; the program's other outputs are stored as each element is read (each is read once).
// The program's inputs, then its outputs 1, …, take x's place among the parameters. Names and
// kinds get "fused_" in front and the program's hash.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"
#include "dlc/expr_program.h"

namespace dlc::codegen::cuda {

// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum.
enum class ReduceOp { Sum, Mean, Max, Min, L1, L2, SumSquare, LogSum, Prod };

struct ReduceSpec {
  ReduceOp op = ReduceOp::Sum;
  DType dtype = DType::F32;  // x and y
  int64_t outer = 1, extent = 1, inner = 1;
  const ExprProgram* prologue = nullptr;  // fused: x is this program's result (dtype f32)
  // Gathered (non-adjacent reduced axes): x's dims with size-1 dims dropped and adjacent dims of
  // the same kind merged, and which of them are reduced. Empty for the [outer, extent, inner]
  // view; else outer is the number of results, extent the elements each reduces, inner 1.
  Shape gather_dims;
  std::vector<bool> gather_reduced;
};

/// The reduction of a tensor of `dims` over `axes` (negative ones count from the end; empty:
/// every axis): the [outer, extent, inner] view when the reduced axes are adjacent once size-1
/// dims are ignored, else the gathered view.
ReduceSpec reduce_spec(ReduceOp op, DType dtype, const Shape& dims, std::vector<int64_t> axes);

KernelSource emit_reduce(const ReduceSpec& spec);

}  // namespace dlc::codegen::cuda
