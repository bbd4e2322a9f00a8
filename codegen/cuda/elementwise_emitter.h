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

}  // namespace dlc::codegen::cuda
