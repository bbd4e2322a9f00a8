// Graph -> plan lowering: buffers, steps, lifetimes and the memory plan.
#include "codegen/lower.h"

#include <fmt/format.h>

#include <map>

#include "codegen/flops.h"
#include "codegen/memory_plan.h"
#include "dlc/error.h"
#include "dlc/session.h"
#include "runtime/plan/plan_values.h"

namespace dlc::codegen {

namespace {

plan::Buffer::Kind buffer_kind(ir::Role role) {
  switch (role) {
    case ir::Role::Input:
    case ir::Role::Label:
      return plan::Buffer::INPUT;
    case ir::Role::Parameter:
      return plan::Buffer::PARAMETER;
    case ir::Role::State:
      return plan::Buffer::STATE;
    case ir::Role::Constant:
      return plan::Buffer::CONSTANT;
    default:
      return plan::Buffer::ACTIVATION;
  }
}

}  // namespace

plan::Plan lower_to_plan(const ir::Graph& g, const LowerOptions& options) {
  plan::Plan p;
  p.set_format_version(kPlanFormatVersion);
  p.set_producer("dlc");
  plan::Stage* st = p.add_stages();
  st->set_device(options.device);

  std::map<const ir::Value*, int> index;
  std::vector<BufferLifetime> lifetimes;
  const std::vector<ir::Node*> nodes = g.nodes();
  const BufferAliases aliases = plan_buffer_aliases(g, options.aliases);
  // Graph nodes but views, then one copy step per state update not done in place.
  std::map<const ir::Node*, int> step_of;
  for (const ir::Node* n : nodes)
    if (!aliases.views.count(n)) step_of[n] = int(step_of.size());
  const int n_copies = int(g.state_updates().size() - aliases.in_place_states.size());
  const int n_steps = std::max<int>(int(step_of.size()) + n_copies, 1);
  auto add_buffer = [&](const ir::Value* v) {
    plan::Buffer* b = st->add_buffers();
    b->set_name(v->name);
    b->set_dtype(int32_t(v->type.dtype));
    for (int64_t d : v->type.shape) b->add_dims(d);
    b->set_kind(buffer_kind(v->role));
    b->set_init(-1);
    if (v->data && options.initial_values) {
      b->set_init(p.initial_values_size());
      plan::to_proto(*v->data, p.add_initial_values());
    }
    bool persistent = v->role != ir::Role::Activation && v->role != ir::Role::Gradient;
    index[v] = st->buffers_size() - 1;
    // Inputs and persistent buffers live for the whole step; activations from their producer on.
    lifetimes.push_back({int64_t(v->type.bytes()), persistent ? 0 : n_steps, persistent ? n_steps - 1 : 0});
    if (v->role == ir::Role::Parameter) p.set_param_bytes(p.param_bytes() + int64_t(v->type.bytes()));
  };
  for (const ir::Value* v : g.inputs()) add_buffer(v);
  for (const ir::Value* v : g.initializers()) add_buffer(v);
  for (const ir::Node* n : nodes) {
    auto step = step_of.find(n);
    for (const ir::Value* out : n->outputs) {
      if (!out) continue;
      add_buffer(out);
      if (step == step_of.end()) continue;  // a view: live where it is read
      lifetimes.back().first = step->second;
      lifetimes.back().last = step->second;
    }
  }
  for (const auto& [value, target] : aliases.root) lifetimes[index.at(value)].alias_of = index.at(target);
  auto touch = [&](const ir::Value* v, int s) {
    BufferLifetime& l = lifetimes[index.at(v)];
    l.first = std::min(l.first, s);
    l.last = std::max(l.last, s);
  };
  for (const ir::Node* n : nodes) {
    auto it = step_of.find(n);
    if (it == step_of.end()) continue;
    const int s = it->second;
    plan::Step* step = st->add_steps();
    step->set_kernel(std::string(op_name(n->op)));
    step->set_name(n->name);
    for (const ir::Value* in : n->inputs) {
      step->add_inputs(in ? index.at(in) : -1);
      if (in) touch(in, s);
    }
    for (const ir::Value* out : n->outputs) step->add_outputs(out ? index.at(out) : -1);
    plan::to_proto(n->attrs, step->mutable_attrs());
    p.set_flops_per_step(p.flops_per_step() + node_flops(*n));
  }
  // State updates: after the graph's steps, each new value not written in place is copied over
  // its state buffer.
  for (const auto& [value, state] : g.state_updates()) {
    if (aliases.in_place_states.count(state)) continue;
    plan::Step* step = st->add_steps();
    step->set_kernel("Identity");
    step->set_name("update_" + state->name);
    step->add_inputs(index.at(value));
    step->add_outputs(index.at(state));
    touch(value, st->steps_size() - 1);
  }
  for (const ir::Value* out : g.outputs()) touch(out, n_steps - 1);

  MemoryPlan mp = plan_memory(lifetimes);
  for (int i = 0; i < st->buffers_size(); ++i) st->mutable_buffers(i)->set_offset(mp.offsets[i]);
  st->set_arena_bytes(mp.arena_bytes);
  st->set_peak_bytes(mp.peak_bytes);

  for (const ir::Value* v : g.inputs()) {
    plan::Binding* b = v->role == ir::Role::Label ? p.add_labels() : p.add_inputs();
    b->set_name(v->name);
    b->set_buffer(index.at(v));
  }
  for (const ir::Value* v : g.outputs()) {
    plan::Binding* b = p.add_outputs();
    b->set_name(v->name);
    b->set_buffer(index.at(v));
  }
  return p;
}

}  // namespace dlc::codegen
