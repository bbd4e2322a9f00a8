// Lowering: an optimized IR graph becomes a plan — one buffer per value, one step per node,
// offsets from the memory plan, initial values for parameters, state and constants.
#pragma once

#include "ir/graph.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::codegen {

struct LowerOptions {
  std::string device = "cpu";
};

plan::Plan lower_to_plan(const ir::Graph& graph, const LowerOptions& options = {});

}  // namespace dlc::codegen
