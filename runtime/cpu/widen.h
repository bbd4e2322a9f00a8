// Half-precision operands for kernels that compute in f32: the f16/bf16 inputs are widened to f32
// copies, the f32 kernel runs on them, and its f16/bf16 outputs are narrowed back (round to
// nearest even). Mixed precision stores MatMul and convolution operands in half precision
// (passes/mixed_precision.h); their CPU kernels compute in f32, which keeps one implementation
// per op (and f32 accumulation) at the cost of the conversions.
#pragma once

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

/// When an input or output of `ctx` is f16 or bf16, runs `f32_kernel` on f32 copies and returns
/// true; otherwise does nothing and returns false. Every half operand must share one dtype.
bool run_widened(const KernelContext& ctx, KernelFn f32_kernel);

}  // namespace dlc::cpu
