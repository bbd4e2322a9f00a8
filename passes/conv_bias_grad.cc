// Conv bias gradient into the filter gradient (conv_bias_grad.h).
#include "passes/conv_bias_grad.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace dlc::passes {

namespace {

// Whether `r` is ReduceSum(dy, axes [0, 2, …, rank - 1], keepdims 0) of an f32 dy of rank >= 3:
// a convolution's bias gradient.
bool is_bias_gradient(const ir::Node& r) {
  if (r.op != ir::OpKind::ReduceSum || r.inputs.size() != 1 || r.outputs.size() != 1 || !r.inputs[0])
    return false;
  const TensorType& dy = r.inputs[0]->type;
  if (dy.dtype != DType::F32 || dy.rank() < 3 || r.attrs.i("keepdims", 1) != 0) return false;
  std::vector<int64_t> want = {0};
  for (int64_t d = 2; d < dy.rank(); ++d) want.push_back(d);
  return r.attrs.ints("axes", {}) == want;
}

// The single-output ConvGradFilter(dy, x) reading `dy` as its dy, or null.
ir::Node* filter_gradient_of(ir::Graph& g, ir::Value* dy) {
  for (ir::Node* n : g.users(dy))
    if (n->op == ir::OpKind::ConvGradFilter && n->inputs[0] == dy && n->outputs.size() == 1) return n;
  return nullptr;
}

}  // namespace

bool ConvBiasGrad::run(ir::Graph& g) {
  // The pairs first: the rewrite removes nodes a walk over g.nodes() would still visit.
  std::vector<std::pair<ir::Node*, ir::Node*>> pairs;  // (ReduceSum, ConvGradFilter)
  for (ir::Node* r : g.nodes()) {
    if (!is_bias_gradient(*r)) continue;
    ir::Node* f = filter_gradient_of(g, r->inputs[0]);
    const bool taken = std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) { return p.second == f; });
    if (f && !taken) pairs.emplace_back(r, f);
  }
  for (const auto& [r, f] : pairs) {
    // The two-output ConvGradFilter takes f's place (and name): f's readers and r's read its
    // results, which take their names and roles.
    const std::string name = f->name;
    const ir::Role filter_role = f->outputs[0]->role, bias_role = r->outputs[0]->role;
    g.set_insertion_point(f);
    ir::Node* both = g.add_node(ir::OpKind::ConvGradFilter, {f->inputs[0], f->inputs[1]}, f->attrs,
                                {g.unique_value_name(f->outputs[0]->name + ".with_bias"),
                                 g.unique_value_name(r->outputs[0]->name + ".in_filter_grad")});
    g.clear_insertion_point();
    g.replace_node(f, {both->outputs[0]});
    g.replace_node(r, {both->outputs[1]});
    g.rename_node(both, name);
    both->outputs[0]->role = filter_role;
    both->outputs[1]->role = bias_role;
  }
  stats_["bias_gradients_folded"] = int64_t(pairs.size());
  return !pairs.empty();
}

}  // namespace dlc::passes
