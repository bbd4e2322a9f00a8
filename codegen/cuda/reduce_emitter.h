// Reduction kernels: y[o, i] = op over e of x[o, e, i] (sum, mean, max; f32 accumulation).
// inner == 1 reduces contiguous rows (one warp or block per row, 4-wide loads when aligned);
// inner > 1 reduces columns with 32 x 8 blocks, split over the reduced axis into a workspace
// when there are too few columns to fill the GPU.
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

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"
#include "dlc/expr_program.h"

namespace dlc::codegen::cuda {

enum class ReduceOp { Sum, Mean, Max };

struct ReduceSpec {
  ReduceOp op = ReduceOp::Sum;
  DType dtype = DType::F32;  // x and y
  int64_t outer = 1, extent = 1, inner = 1;
  const ExprProgram* prologue = nullptr;  // fused: x is this program's result (dtype f32)
};

KernelSource emit_reduce(const ReduceSpec& spec);

}  // namespace dlc::codegen::cuda
