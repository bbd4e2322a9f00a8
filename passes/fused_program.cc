// The expression program of a fused node (fused_program.h).
#include "passes/fused_program.h"

#include "passes/value_takeover.h"

namespace dlc::passes {

ExprProgram program_of(const ir::Node& n) {
  std::vector<ExprInput> inputs;
  for (const ir::Value* v : n.inputs) inputs.push_back({v->name, v->type.dtype, v->type.shape});
  std::vector<std::string> names;
  for (const ir::Value* v : n.outputs) names.push_back(v->name);
  return parse_expr_program(n.attrs.s("program"), std::move(inputs), names);
}

ir::Node* replace_fused_node(ir::Graph& g, ir::Node* n, const std::vector<ir::Value*>& operands,
                             const ExprProgram& p, const std::vector<ir::Value*>& results) {
  std::vector<std::string> names;
  std::vector<TensorType> types;
  for (const ir::Value* v : results) {
    names.push_back(g.unique_value_name(v->name + ".rebuilt"));
    types.push_back(v->type);
  }
  Attrs attrs = n->attrs;
  attrs.set("program", p.deduplicated().body());
  g.set_insertion_point(n);
  ir::Node* node = g.add_node_typed(n->op, operands, std::move(attrs), names, types, n->name);
  g.clear_insertion_point();
  take_over_values(node, results);
  const std::string name = n->name;
  g.remove_node(n);
  g.rename_node(node, name);  // the rebuilt node keeps n's name (a profile shows it)
  return node;
}

}  // namespace dlc::passes
