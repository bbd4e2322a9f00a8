// Declarations of the gradient rules listed in rules.def (one function per op, in the file of
// its op family).
#pragma once

#include "passes/grad_rules.h"

namespace dlc::passes::grad {

#define DLC_GRAD_RULE(op, fn) void fn(GradContext& c);
#include "passes/grad/rules.def"
#undef DLC_GRAD_RULE

}  // namespace dlc::passes::grad
