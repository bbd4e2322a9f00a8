// The expression program of a FusedElementwise or FusedReduce node, rebuilt from its `program`
// attribute and its operands and results (dlc/expr_program.h).
#pragma once

#include "dlc/expr_program.h"
#include "ir/graph.h"

namespace dlc::passes {

/// The program of `n`: inputs named, typed and shaped as n's operands, outputs named as its results.
ExprProgram program_of(const ir::Node& n);

}  // namespace dlc::passes
