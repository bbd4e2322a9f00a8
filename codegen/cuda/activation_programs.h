// Activations with attributes (LeakyRelu, PRelu, ThresholdedRelu, HardSigmoid, HardSwish, Elu,
// Selu, Celu, Mish), and float Mod (fmod, or Python's sign of the divisor), written in the ops
// expression programs have, their attributes as constants,
// so that the CUDA elementwise emitter gives each a kernel. Each follows its CPU kernel's formula
// (runtime/cpu/kernels/elementwise.cc) in f32, NaN handling included: run by the CPU's
// FusedElementwise interpreter they give the kernel's bits (ActivationPrograms tests).
#pragma once

#include <string_view>
#include <vector>

#include "dlc/attributes.h"
#include "dlc/expr_program.h"

namespace dlc::codegen::cuda {

/// Whether `op` is one of these activations.
bool is_activation_with_attributes(std::string_view op);

/// Appends activation `op` with `attrs` applied to `operands` (x; PRelu: x, slope; Mod: a, b) to `p` and
/// returns the value of its result; throws dlc::Error for another op or operand count.
int activation_expr(ExprProgram& p, std::string_view op, const Attrs& attrs,
                    const std::vector<int>& operands);

}  // namespace dlc::codegen::cuda
