// Declarations of the gradient rules listed in rules.def (one function per op, in the file of
// its op family).
#pragma once

#include "passes/grad_rules.h"

namespace dlc::passes::grad {

/// Fails for a node with a folded activation epilogue (MatMul, Conv, BatchNormalization): those
/// appear only after autodiff, in the fusion pass.
void require_no_activation(const GradContext& c);

#define DLC_GRAD_RULE(op, fn) void fn(GradContext& c);
#include "passes/grad/rules.def"
#undef DLC_GRAD_RULE

}  // namespace dlc::passes::grad
