// Lowering: an optimized IR graph becomes a plan — one buffer per value, one step per node
// (Reshape views excepted), offsets from the memory plan (aliased buffers share bytes), initial
// values for parameters, state and constants.
#pragma once

#include "codegen/buffer_aliases.h"
#include "ir/graph.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::codegen {

struct LowerOptions {
  std::string device = "cpu";
  AliasOptions aliases;  // Reshape views and in-place state updates (both on by default)
  /// false: buffers get no initial values (for the memory figures alone, as scheduling needs).
  bool initial_values = true;
};

plan::Plan lower_to_plan(const ir::Graph& graph, const LowerOptions& options = {});

}  // namespace dlc::codegen
