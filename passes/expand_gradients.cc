// Expand gradients.
#include "passes/expand_gradients.h"

#include "passes/autodiff.h"

namespace dlc::passes {

namespace {

ir::Value* broadcast_scalar(ir::Graph& g, const TensorType& type, double v, const std::string& name) {
  Attrs a;
  a.set("shape", type.shape);
  ir::Value* s =
      g.add_constant(g.unique_value_name(name + ".scalar"), Tensor::from_double(type.dtype, {v}, {}));
  return g.add_node(ir::OpKind::Expand, {s}, a, {g.unique_value_name(name)}, name)->outputs[0];
}

void expand(ir::Graph& g, ir::Node* n) {
  ir::Value* y = n->inputs[0];
  const std::vector<ir::Value*> xs(n->inputs.begin() + 1, n->inputs.end());
  g.set_insertion_point(n);
  ir::Value* seed = broadcast_scalar(g, y->type, 1.0, n->name + ".seed");
  const std::vector<ir::Value*> grads = backpropagate(g, y, seed, xs);
  std::vector<ir::Value*> results;
  for (size_t i = 0; i < xs.size(); ++i) {
    ir::Value* out = n->outputs[i];
    ir::Value* d = grads[i] ? grads[i] : broadcast_scalar(g, out->type, 0.0, out->name + ".zeros");
    ir::Value* copy = g.add_node(ir::OpKind::Identity, {d}, {},
                                 {g.unique_value_name(out->name + ".expanded")}, n->name + ".out")
                          ->outputs[0];
    results.push_back(copy);
  }
  g.clear_insertion_point();
  g.replace_node(n, results);
}

}  // namespace

bool ExpandGradients::run(ir::Graph& g) {
  int64_t expanded = 0;
  for (ir::Node* n : g.nodes())
    if (n->op == ir::OpKind::Gradient) {
      expand(g, n);
      ++expanded;
    }
  stats_["gradients_expanded"] = expanded;
  return expanded > 0;
}

}  // namespace dlc::passes
