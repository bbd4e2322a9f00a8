// Optimizer fusion (optimizer_fusion.h): grouping the updates and the rewrite into
// MultiTensorUpdate nodes; the gradient Casts of single updates folded.
#include "passes/optimizer_fusion.h"

#include <algorithm>
#include <map>

#include "dlc/multi_tensor_update.h"
#include "passes/value_takeover.h"

namespace dlc::passes {

namespace {

// Updates of larger parameters keep their own node: one launch is little next to their work, and
// the memory-aware schedule (schedule_memory.h) can then run each right after its gradient and
// free it, where a merged node keeps every gradient it reads alive until the end of the step.
constexpr int64_t kMaxMergedElements = int64_t(1) << 16;

struct Group {
  const MultiTensorLayout* layout;
  std::vector<ir::Node*> nodes;  // in schedule order
};

// Whether every operand but the bool apply (input `apply`) and every result is f32.
bool all_f32(const ir::Node& n, int apply) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] && int(i) != apply && n.inputs[i]->type.dtype != DType::F32) return false;
  for (const ir::Value* v : n.outputs)
    if (v && v->type.dtype != DType::F32) return false;
  return true;
}

// Whether `n` may join `gr`: the same op, attributes, scalar operands and operand presence, and
// every operand produced before the group's first update (where the merged node goes).
bool can_join(const Group& gr, const ir::Node& n, const std::map<const ir::Node*, size_t>& position) {
  const ir::Node& first = *gr.nodes.front();
  if (n.op != first.op || !(n.attrs == first.attrs) || n.inputs.size() != first.inputs.size() ||
      n.outputs.size() != first.outputs.size())
    return false;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (gr.layout->is_scalar(int(i)) ? n.inputs[i] != first.inputs[i] : !n.inputs[i] != !first.inputs[i])
      return false;
    const ir::Value* v = n.inputs[i];
    if (v && v->producer && position.at(v->producer) >= position.at(&first)) return false;
  }
  for (size_t j = 0; j < n.outputs.size(); ++j)
    if (!n.outputs[j] != !first.outputs[j]) return false;
  return true;
}

void merge(ir::Graph& g, const Group& gr) {
  const MultiTensorLayout& l = *gr.layout;
  const ir::Node& first = *gr.nodes.front();
  std::vector<ir::Value*> operands, taken;
  std::vector<std::string> names;
  std::vector<TensorType> types;
  for (int i = 0; i < l.inputs; ++i)
    if (l.is_scalar(i))
      operands.push_back(size_t(i) < first.inputs.size() ? first.inputs[size_t(i)] : nullptr);
  for (const ir::Node* n : gr.nodes) {
    for (int i = 0; i < l.inputs; ++i)
      if (!l.is_scalar(i)) operands.push_back(size_t(i) < n->inputs.size() ? n->inputs[size_t(i)] : nullptr);
    for (int j = 0; j < l.outputs; ++j) {
      ir::Value* out = size_t(j) < n->outputs.size() ? n->outputs[size_t(j)] : nullptr;
      taken.push_back(out);
      names.push_back(out ? g.unique_value_name(out->name + ".unmerged") : "");
      types.push_back(out ? out->type : TensorType{});
    }
  }
  Attrs attrs = first.attrs;
  attrs.set("update", std::string(l.update));
  g.set_insertion_point(&first);
  ir::Node* merged = g.add_node_typed(ir::OpKind::MultiTensorUpdate, std::move(operands), std::move(attrs),
                                      std::move(names), std::move(types), "merged." + first.name);
  g.clear_insertion_point();
  take_over_values(merged, taken);
  for (auto it = gr.nodes.rbegin(); it != gr.nodes.rend(); ++it) g.remove_node(*it);
}

}  // namespace

int64_t fuse_optimizer_updates(ir::Graph& g) {
  const std::vector<ir::Node*> nodes = g.nodes();
  std::map<const ir::Node*, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = i;
  std::vector<Group> groups;
  for (ir::Node* n : nodes) {
    const MultiTensorLayout* layout = find_multi_tensor_layout(ir::op_name(n->op));
    // Every operand present or absent, the trailing apply perhaps left out.
    if (!layout || !all_f32(*n, layout->apply_input()) ||
        (int(n->inputs.size()) != layout->inputs && int(n->inputs.size()) != layout->apply_input()) ||
        int(n->outputs.size()) != layout->outputs ||
        num_elements(n->inputs[0]->type.shape) > kMaxMergedElements)
      continue;
    // The latest group of the kind that takes it, else a new one.
    Group* chosen = nullptr;
    for (auto it = groups.rbegin(); it != groups.rend() && !chosen; ++it)
      if (it->layout == layout && can_join(*it, *n, position)) chosen = &*it;
    if (!chosen) chosen = &groups.emplace_back(Group{layout, {}});
    chosen->nodes.push_back(n);
  }
  int64_t merged = 0;
  for (const Group& gr : groups) {
    if (gr.nodes.size() < 2) continue;
    merge(g, gr);
    merged += int64_t(gr.nodes.size());
  }
  return merged;
}

int64_t fold_gradient_casts(ir::Graph& g) {
  int64_t folded = 0;
  for (ir::Node* n : g.nodes()) {
    if (!find_multi_tensor_layout(ir::op_name(n->op))) continue;  // a single update: param, grad required
    ir::Value* grad = n->inputs[1];
    ir::Node* cast = grad->producer;
    if (n->inputs[0]->type.dtype != DType::F32 || !cast || cast->op != ir::OpKind::Cast ||
        !is_half(cast->inputs[0]->type.dtype) || g.is_pinned(grad) || g.users(grad).size() != 1 ||
        std::count(n->inputs.begin(), n->inputs.end(), grad) != 1)
      continue;
    n->inputs[1] = cast->inputs[0];
    g.remove_node(cast);
    ++folded;
  }
  return folded;
}

}  // namespace dlc::passes
