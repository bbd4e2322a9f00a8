// The expression program of a FusedElementwise or FusedReduce node, rebuilt from its `program`
// attribute and its operands and results (dlc/expr_program.h), and the node rebuilt around a
// changed program.
#pragma once

#include "dlc/expr_program.h"
#include "ir/graph.h"

namespace dlc::passes {

/// The program of `n`: inputs named, typed and shaped as n's operands, outputs named as its results.
ExprProgram program_of(const ir::Node& n);

/// A node of `n`'s kind and attributes in n's place, with `operands` and program `p`, that takes
/// over `results` (p's outputs, in order: names, roles and references stay) and n's name; n goes.
ir::Node* replace_fused_node(ir::Graph& g, ir::Node* n, const std::vector<ir::Value*>& operands,
                             const ExprProgram& p, const std::vector<ir::Value*>& results);

}  // namespace dlc::passes
