// The memory model of the scheduling pass (ir/memory_model.h) from lowering itself: the figures
// are those the plan of the graph would have, and the sharing is the plan's buffer sharing.
#pragma once

#include "codegen/lower.h"
#include "ir/memory_model.h"

namespace dlc::codegen {

class PlanMemoryModel final : public ir::MemoryModel {
 public:
  /// The figures of plans lowered with `options` (the pipeline's device and buffer sharing).
  explicit PlanMemoryModel(LowerOptions options);
  ir::MemoryFigures measure(const ir::Graph& g) const override;
  ir::SharedBuffers shared_buffers(const ir::Graph& g) const override;

 private:
  LowerOptions options_;
};

}  // namespace dlc::codegen
