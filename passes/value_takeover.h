// Handing values from the nodes a rewrite replaces to the node replacing them: the values keep
// their names, roles and every reference (uses, graph outputs, state updates, the names
// checkpoints and plans know them by), only their producer changes.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace dlc::passes {

/// Makes `node` the producer of `taken[i]` as its result i (null: `node` keeps its own result i).
/// The results `node` had take the taken values' places in their old producers, which have no
/// users then and can be removed (Graph::remove_node).
void take_over_values(ir::Node* node, const std::vector<ir::Value*>& taken);

}  // namespace dlc::passes
