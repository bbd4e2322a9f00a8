// PlanMemoryModel: lowering without initial values, and plan_buffer_aliases.
#include "codegen/plan_memory_model.h"

namespace dlc::codegen {

PlanMemoryModel::PlanMemoryModel(LowerOptions options) : options_(std::move(options)) {
  options_.initial_values = false;
}

ir::MemoryFigures PlanMemoryModel::measure(const ir::Graph& g) const {
  const plan::Plan p = lower_to_plan(g, options_);
  ir::MemoryFigures f;
  for (const plan::Stage& st : p.stages()) {
    f.peak_bytes += st.peak_bytes();
    f.arena_bytes += st.arena_bytes();
  }
  return f;
}

ir::SharedBuffers PlanMemoryModel::shared_buffers(const ir::Graph& g) const {
  BufferAliases a = plan_buffer_aliases(g, options_.aliases);
  ir::SharedBuffers s;
  s.root = std::move(a.root);
  s.no_step = std::move(a.views);
  return s;
}

}  // namespace dlc::codegen
