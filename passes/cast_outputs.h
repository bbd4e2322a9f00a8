// Cast outputs, the last step of the fusion pass's elementwise part (fusion.h), after reduction
// fusion: a Cast to f16/bf16 of a FusedElementwise's or FusedReduce's stored result becomes one
// more output of that node, which stores the rounded value itself; the f32 result goes when nothing
// else reads it (a FusedReduce's reduced result, result 0, is not a stored one). Grouping could not take such
// a Cast when the group's result was also read, before the Cast, by a node outside the group — typically the
// reduction that reduction fusion then absorbs: a bias gradient's dZ is summed for the bias and cast to half
// for the weight gradient's MatMul (mixed precision's backward), which stored dZ in f32 (4 bytes an element)
// for a separate Cast to read back. Exact: the program's Cast rounds as the Cast kernel does.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace dlc::passes {

/// Folds every such Cast; returns how many.
int64_t fold_casts_into_fused_outputs(ir::Graph& g);

}  // namespace dlc::passes
