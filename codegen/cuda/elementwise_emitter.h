// Fused elementwise kernels from expression programs (expr_program.h). The kernel's name is
// "dlc_elementwise_" plus a hash of the program, so equal programs share a compiled kernel.
// Shapes and broadcast strides are compile-time constants. When every operand is read
// contiguously, as a scalar, or along rows that are a multiple of 4 long, each thread handles 4
// elements with vector loads (checked for alignment at run time, with a scalar fallback).
//
// Entry: (in0, in1, …, out0, out1, …): the program's inputs then its outputs, as declared.
#pragma once

#include "codegen/cuda/kernel_source.h"
#include "dlc/expr_program.h"

namespace dlc::codegen::cuda {

KernelSource emit_elementwise(const ExprProgram& program);

/// A program as device code for kernels that consume its output 0 where they read it (the fused
/// reduction, reduce_emitter.h). `code` defines the op helpers, dlc_compute, and
/// `float dlc_value(<params>, Index i)`: output 0 at element i of the program's dims, with
/// outputs 1, … stored at i; it goes after the prelude (of `types`) and the definition of Index.
struct ProgramSource {
  std::string code;
  std::vector<DType> types;
  std::vector<std::string> params;  // "const float* __restrict__ in0", …, "float* __restrict__ out1", …
  std::vector<std::string> args;    // "in0", …, "out1", …
  std::vector<std::string> names;   // the inputs' and outputs 1, …'s names (kernel entry parameters)
  std::string hash;                 // of the program, for kernel names
};
ProgramSource program_source(const ExprProgram& program);

}  // namespace dlc::codegen::cuda
