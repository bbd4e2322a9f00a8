// Integer elementwise ops: Add, Sub, Mul, Max and Min of two operands broadcast to the output
// (numpy rules), on i32, i64 or u8 tensors, in the storage type (wrapping on overflow, as the CPU
// kernels do in practice), and the comparisons Equal, Greater, GreaterOrEqual, Less and
// LessOrEqual, whose result is bool. Expression programs compute in f32 and store floats and
// bools only; these serve integer tensors: Dropout's i64 run counter (counter + 1 after every
// training step, passes/training_mode.h), NegativeLogLikelihoodLoss's gradient (labels compared
// with class ids), position or index arithmetic.
//
// Entry: (in0, in1, out0), one thread per output element, grid-stride.
#pragma once

#include <string>

#include "codegen/cuda/kernel_source.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct IntegerBinarySpec {
  std::string op;            // Add, Sub, Mul, Max, Min, or a comparison
  DType dtype = DType::I64;  // a and b (and the result but for a comparison's, which is bool)
  Shape out, a, b;           // a and b broadcast to out
};

/// Whether `op` is one of the ops above; whether it is a comparison (a bool result).
bool is_integer_binary_op(const std::string& op);
bool is_integer_comparison(const std::string& op);
/// Whether kernels of this file store `t`: i32, i64, u8.
bool is_integer_storage(DType t);

/// Throws dlc::Error for another op or dtype, or operands that do not broadcast.
KernelSource emit_integer_binary(const IntegerBinarySpec& spec);

}  // namespace dlc::codegen::cuda
