// Buffer sharing decided before memory planning: values that get no bytes of their own.
// A Reshape's result is a view of its operand (the same bytes under other dims, no step), and a
// state's new value is written by its producer straight into the state's buffer when nothing
// reads the old value afterwards (no copy step at the end of the plan).
#pragma once

#include <map>
#include <set>

#include "ir/graph.h"

namespace dlc::codegen {

struct AliasOptions {
  bool in_place_state_updates = true;  // producer writes the state's buffer; no copy step
  bool reshape_views = true;           // Reshape shares its operand's buffer; no step
};

struct BufferAliases {
  /// value -> the value whose buffer it shares at offset 0; the target has a buffer of its own.
  std::map<const ir::Value*, const ir::Value*> root;
  /// Reshape nodes that lower to no step (their result is a view in `root`).
  std::set<const ir::Node*> views;
  /// States whose new value is written in place: the plan has no copy step for them.
  std::set<const ir::Value*> in_place_states;

  const ir::Value* root_of(const ir::Value* v) const {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  }
};

/// Which values share buffers in the plan of `g` (nodes in schedule order, then the copies of
/// the state updates not done in place). Only exact transformations: every step reads the bytes
/// it read with one buffer per value.
BufferAliases plan_buffer_aliases(const ir::Graph& g, const AliasOptions& options);

/// Whether the CPU kernel of `n` stays exact when its output `output` occupies the bytes of its
/// input `input`: element i of every operand is read before element i of any result is written.
bool may_write_in_place(const ir::Node& n, int output, int input);

}  // namespace dlc::codegen
