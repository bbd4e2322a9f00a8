// Buffer sharing for buffer_aliases.h: Reshape views, then in-place state updates.
#include "codegen/buffer_aliases.h"

#include <vector>

#include "dlc/in_place_operands.h"

namespace dlc::codegen {

namespace {

bool is_binary_arithmetic(ir::OpKind op) {
  return op == ir::OpKind::Add || op == ir::OpKind::Sub || op == ir::OpKind::Mul || op == ir::OpKind::Div;
}

// A state whose bytes are ever overwritten during a run (by a copy or in place).
std::set<const ir::Value*> updated_states(const ir::Graph& g) {
  std::set<const ir::Value*> s;
  for (const auto& [value, state] : g.state_updates()) s.insert(state);
  return s;
}

}  // namespace

bool may_write_in_place(const ir::Node& n, int output, int input) {
  const ir::Value* out = n.outputs.at(size_t(output));
  const ir::Value* in = n.inputs.at(size_t(input));
  if (!out || !in || out->type != in->type) return false;
  if (is_binary_arithmetic(n.op)) return output == 0 && input <= 1;
  // Where(cond, x, y) reads its value operands and writes its result element by element, same
  // index (an operand of the result's type is not broadcast): so a gated state update (Where of
  // the new value and the state's old one, grad_accumulation.h) writes into the state's buffer
  // instead of being copied there after the step.
  if (n.op == ir::OpKind::Where) return output == 0 && (input == 1 || input == 2);
  // The kernels read and write these pairs element by element, same index
  // (runtime/cpu/kernels/optimizer_update.cc, norm.cc; the CUDA ones and cuDNN update in place).
  return in_place_operand(ir::op_name(n.op), n.attrs, output) == input;
}

BufferAliases plan_buffer_aliases(const ir::Graph& g, const AliasOptions& options) {
  BufferAliases a;
  const std::vector<ir::Node*> nodes = g.nodes();
  const std::set<const ir::Value*> updated = updated_states(g);

  // Reshape views. A view of a state that is overwritten during the run would see the new bytes
  // where the old ones were meant (a later reader, or a copy step), so those keep their step.
  if (options.reshape_views) {
    for (const ir::Node* n : nodes) {
      if (n->op != ir::OpKind::Reshape || !n->inputs[0] || !n->outputs[0]) continue;
      const ir::Value* target = a.root_of(n->inputs[0]);
      if (updated.count(target) || n->outputs[0]->type.bytes() != target->type.bytes()) continue;
      a.root[n->outputs[0]] = target;
      a.views.insert(n);
    }
  }
  if (!options.in_place_state_updates) return a;

  std::map<const ir::Node*, size_t> position;
  for (size_t s = 0; s < nodes.size(); ++s) position[nodes[s]] = s;
  // States read by a copy step (the new value of another state is this state's old value).
  std::set<const ir::Value*> copied_from;
  for (const auto& [value, state] : g.state_updates()) copied_from.insert(value);

  for (const auto& [value, state] : g.state_updates()) {
    const ir::Node* producer = value->producer;
    // Runtime inputs, parameters, constants, views and values already placed keep their copy;
    // so do graph outputs (read after the run) on either side.
    if (!producer || a.views.count(producer) || a.root.count(value) || value->type != state->type) continue;
    if (g.is_output(value) || g.is_output(state) || copied_from.count(state)) continue;
    // The old value: no reader after the producer; at the producer only its paired operand.
    const size_t s = position.at(producer);
    bool read_later = false;
    for (size_t t = s + 1; t < nodes.size() && !read_later; ++t)
      for (const ir::Value* in : nodes[t]->inputs) read_later |= in == state;
    for (size_t i = 0; i < producer->inputs.size() && !read_later; ++i)
      if (producer->inputs[i] == state)
        read_later = !may_write_in_place(*producer, value->producer_output, int(i));
    // Another result of the producer already in a state's buffer is fine (distinct states);
    // views of the new value move with it.
    if (read_later) continue;
    for (auto& [v, target] : a.root)
      if (target == value) target = state;
    a.root[value] = state;
    a.in_place_states.insert(state);
  }
  return a;
}

}  // namespace dlc::codegen
