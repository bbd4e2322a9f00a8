// Reduction fusion, part of the fusion pass (fusion.h): a ReduceSum or ReduceMean of an f32
// result of an elementwise producer (a FusedElementwise, or one elementwise op, which the
// elementwise fusion then turns into a FusedElementwise of one node) joins the producer as one
// FusedReduce node (ir/ops/fused.def): the producer's program, its result 0 reduced and the
// producer's results used elsewhere (the reduced one too when something else uses it: a bias
// gradient's dZ also feeds the weight gradient's MatMul) stored as results 1, 2, … in the same
// pass over the elements. So the reduction costs no kernel and no second read of its operand.
//
// Legality: the reduced value is f32 and not empty; the reduction's result is f32 and its axes
// are adjacent (the [outer, extent, inner] view both backends reduce); one reduction per producer.
// ReduceMax, the other reductions and 16-bit reductions are left alone. The fused node stands
// where the producer stood (the reduction's only operand is the producer's, so every use of
// either comes later) and takes over the reduction's result and the stored results (names,
// roles, every reference stay). The CPU kernel sums in the unfused kernel's order and precision,
// so a fused graph gives the same bits.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace dlc::passes {

/// A ReduceSum / ReduceMean of `v` that may join `v`'s producer (see above), or null.
ir::Node* fusable_reduction(const ir::Graph& g, const ir::Value* v);

/// Fuses every FusedElementwise of `g` with a reduction of one of its results where legal; returns
/// how many reductions were fused.
int64_t fuse_reductions(ir::Graph& g);

}  // namespace dlc::passes
