// Memory-aware scheduling: reorders the nodes into another valid schedule whose plan has a lower
// peak of live bytes. Runs last, on the graph lowering will see.
//
// The liveness model is lowering's (codegen/lower.cc): a node's results are live from its step to
// the step of their last reader (graph outputs and state-update values not written in place: to
// the end); values sharing bytes (Reshape views, in-place state updates, as the memory model
// reports them) are one buffer over the union of their lifetimes; inputs, parameters, state and
// constants are live throughout. Candidates are list schedules: among the nodes whose operands
// are computed, a view runs at once, else the pick is by a rule —
//   - "greedy": least net change of live bytes (allocated − freed), then least allocated;
//   - "eager-frees": the original order, except that a node freeing more than it allocates runs
//     as soon as it can (a weight gradient's optimizer update right after the gradient);
// ties by the original order. Order-sensitive pairs keep their order: a node that reads a state
// written in place by another node's result stays before that node. Each candidate is measured
// with the memory model (the plan lowering would build), and the best one is kept only if
// neither its peak nor its arena is larger than the original's and one of them is smaller;
// otherwise the graph is left as it is.
//
// Stats: peak_before/after, arena_before/after (bytes), nodes_moved (nodes outside the longest
// run kept in its original relative order).
#pragma once

#include "ir/memory_model.h"
#include "passes/pass.h"

namespace dlc::passes {

class ScheduleMemory final : public Pass {
 public:
  explicit ScheduleMemory(const ir::MemoryModel& model) : model_(model) {}
  std::string_view name() const override { return "schedule"; }
  std::string_view summary() const override {
    return "reorder the nodes to lower the plan's peak of live bytes";
  }
  bool run(ir::Graph& graph) override;

 private:
  const ir::MemoryModel& model_;
};

}  // namespace dlc::passes
