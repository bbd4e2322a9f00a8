// What the plan of a graph costs in memory, as the scheduling pass needs it. The IR only declares
// the interface; codegen implements it with lowering and the memory plan, so passes stay IR-only.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "ir/graph.h"

namespace dlc::ir {

/// Values that get no bytes of their own in the plan of a graph (its nodes in their order).
struct SharedBuffers {
  /// value -> the value whose bytes it shares (a Reshape view, or a new state value written in
  /// place over its state); the target has bytes of its own.
  std::map<const Value*, const Value*> root;
  /// Nodes that lower to no step (Reshape views).
  std::set<const Node*> no_step;

  const Value* root_of(const Value* v) const {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  }
};

struct MemoryFigures {
  int64_t peak_bytes = 0;   // the most bytes live at one step
  int64_t arena_bytes = 0;  // the arena the offsets need
};

class MemoryModel {
 public:
  virtual ~MemoryModel() = default;
  /// The memory plan of `g` lowered with its nodes in their current order.
  virtual MemoryFigures measure(const Graph& g) const = 0;
  /// Which values share bytes in that plan.
  virtual SharedBuffers shared_buffers(const Graph& g) const = 0;
};

}  // namespace dlc::ir
