// Optimizer fusion, part of the fusion pass (fusion.h): the optimizer pass emits one update per
// parameter (SgdUpdate, AdamUpdate, RmspropUpdate); updates of one op with identical attributes,
// the same scalar operands (lr, step) and f32 operands and results become one MultiTensorUpdate
// node (dlc/multi_tensor_update.h), which the CPU runs as one kernel and CUDA as one multi-tensor
// launch. The merged kernels compute each element with the single update's code, so training
// gives the same bits. Only parameters of at most 65536 elements merge: a larger one's update
// keeps its own launch, so the schedule pass can free its gradient right after the update.
//
// Legality and placement: the merged node stands where the group's first update stood, so an
// update joins a group only when all its operands are produced before that update (every use of
// an update's results comes after the update itself, hence after the merged node). An update that
// cannot join starts a new group of its kind. The merged node takes over the updates' results
// (names, roles, state updates and every other reference stay). A plan is one stage
// (codegen/lower.cc), so no stage boundary splits a group. Groups of one update are left alone.
//
// Then a single (unmerged) update of an f32 parameter whose gradient is a Cast of a 16-bit value
// to f32 that nothing else reads takes that value instead (mixed precision's weight gradients:
// the kernels widen it as they load it, the same bits), one launch and the f32 copy fewer.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace dlc::passes {

/// Merges the optimizer updates of `g` as above; returns how many updates were merged.
int64_t fuse_optimizer_updates(ir::Graph& g);

/// Folds the gradient Casts of single updates as above; returns how many it folded.
int64_t fold_gradient_casts(ir::Graph& g);

}  // namespace dlc::passes
