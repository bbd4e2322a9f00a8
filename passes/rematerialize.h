// Rematerialization, part of the fusion pass (fusion.h), after elementwise grouping and before
// reduction fusion. A FusedElementwise B that reads a result v of an earlier FusedElementwise A of
// the same shape computes v itself from A's operands:
//   - when every result of A is read by B alone (none is a graph output or state update): B takes
//     A's whole program and A goes (stat producers_merged). Greedy grouping leaves such pairs
//     apart when an op of B had operands from two groups;
//   - otherwise when A's operands that v depends on, less those B reads already, hold fewer bytes
//     than v (stat values_recomputed), and v takes at most kMaxRecomputed instructions. In
//     training that is a backward kernel reading the forward's f32 intermediates — GELU's x,
//     x/√2 and erf(x/√2) + 1, 12 bytes an element — that recomputes them from what they were
//     made of, the half MatMul result and the bias (2 bytes an element), so they are neither
//     written nor kept from the forward to the backward. A stores v only while something else
//     reads it.
// The recomputed bits are the stored ones: the same f32 instructions, and a 16-bit result goes
// through the Cast that rounded it for storing.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace dlc::passes {

inline constexpr int kMaxRecomputed = 32;

struct RematerializeCounts {
  int64_t producers_merged = 0;
  int64_t values_recomputed = 0;
};

RematerializeCounts rematerialize(ir::Graph& g);

}  // namespace dlc::passes
