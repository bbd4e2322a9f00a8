// The verifier: structural and type invariants of a graph, checked after every pass in tests
// and debug builds.
#pragma once

#include "ir/graph.h"

namespace dlc::ir {

/// Throws dlc::Error describing the first violated invariant: arity against the op table,
/// inputs defined before use, unique names, output types equal to what inference gives.
void verify(const Graph& graph);

}  // namespace dlc::ir
