// Integer elementwise ops, whose operands broadcast to the output (numpy rules), computed in the
// storage types as the CPU kernels compute them (wrapping on overflow): Add, Sub, Mul, Div, Mod,
// Max and Min of two i32, i64, i8 or u8 operands of one type; Clip by its present bounds; the comparisons
// Equal, Greater, GreaterOrEqual, Less and LessOrEqual, whose result is bool; Pow with an integer base or
// exponent (the other may be f32, f16 or bf16; the result has the base's type: an integer power
// by repeated squaring, a float exponent through double, a float base through powf); Where
// choosing between integer values; and Cast to or from i32, i64, i8 or u8 (from or to those, bool,
// f32, f16 or bf16), with the CPU kernel's conversions (a float truncated toward zero,
// saturating, NaN to 0). Expression programs compute in f32 and store floats and bools
// only; these serve integer tensors: Dropout's i64 run counter, NegativeLogLikelihoodLoss's
// gradient (labels compared with class ids), index and position arithmetic.
//
// Div and Mod truncate as C does (Mod with fmod = 0 takes the divisor's sign, as Python), and
// MIN / -1 gives MIN as the CPU's; a zero divisor gives 0, where the CPU kernel stops with an
// error (a kernel cannot).
//
// Entry: (in0, …, inN, out0), one thread per output element, grid-stride.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct IntegerElementwiseSpec {
  std::string op;
  std::vector<TensorType> operands;  // broadcast to out's shape
  TensorType out;
  bool c_fmod = false;                      // Mod: the dividend's sign (C fmod) rather than the divisor's
  bool clip_min = false, clip_max = false;  // Clip: which bounds the operands after x are
};

/// Whether these kernels take `op` on operands of these dtypes with a `result` of that dtype (the
/// result matters to Cast only; see above).
bool takes_integer_kernel(const std::string& op, const std::vector<DType>& operands, DType result);
/// The result's dtype but for Cast's (its target): bool for a comparison, the values' for Where,
/// the first operand's else.
DType integer_result_dtype(const std::string& op, const std::vector<DType>& operands);
bool is_integer_comparison(const std::string& op);
/// Whether kernels of this file store `t` as an integer: i32, i64, i8, u8.
bool is_integer_storage(DType t);

/// Throws dlc::Error for an op or dtypes these kernels do not take, a result of another dtype,
/// or operands that do not broadcast.
KernelSource emit_integer_elementwise(const IntegerElementwiseSpec& spec);

}  // namespace dlc::codegen::cuda
