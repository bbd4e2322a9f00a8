// Reduction fusion (reduce_fusion.h): the legality check and the rewrite into FusedReduce nodes.
#include "passes/reduce_fusion.h"

#include <algorithm>

#include "dlc/expr_program.h"
#include "passes/fused_program.h"
#include "passes/value_takeover.h"

namespace dlc::passes {

namespace {

bool reducible(const ir::Node& r) {
  if ((r.op != ir::OpKind::ReduceSum && r.op != ir::OpKind::ReduceMean) || r.inputs.size() != 1 ||
      r.outputs.size() != 1 || !r.outputs[0] || r.outputs[0]->type.dtype != DType::F32)
    return false;
  const std::vector<int64_t> axes = r.attrs.ints("axes", {});
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1) return false;
  return true;
}

}  // namespace

ir::Node* fusable_reduction(const ir::Graph& g, const ir::Value* v) {
  if (!v || !v->producer || v->type.dtype != DType::F32 || num_elements(v->type.shape) == 0) return nullptr;
  for (ir::Node* u : g.users(v))
    if (reducible(*u)) return u;
  return nullptr;
}

int64_t fuse_reductions(ir::Graph& g) {
  std::vector<ir::Node*> producers;
  for (ir::Node* n : g.nodes())
    if (n->op == ir::OpKind::FusedElementwise) producers.push_back(n);
  int64_t fused = 0;
  for (ir::Node* p : producers) {
    ir::Node* r = nullptr;
    size_t reduced = 0;  // the result of p that r reduces
    for (; reduced < p->outputs.size() && !r; ++reduced) r = fusable_reduction(g, p->outputs[reduced]);
    if (!r) continue;
    --reduced;
    // The program's outputs: the reduced value, then every result of p used elsewhere (stored).
    std::vector<ir::Value*> taken = {r->outputs[0]};
    std::vector<std::string> names = {g.unique_value_name(r->outputs[0]->name + ".unfused")};
    std::vector<TensorType> types = {r->outputs[0]->type};
    std::vector<size_t> stored;
    for (size_t k = 0; k < p->outputs.size(); ++k) {
      ir::Value* v = p->outputs[k];
      const std::vector<ir::Node*> users = g.users(v);
      const bool elsewhere = g.is_pinned(v) || std::any_of(users.begin(), users.end(),
                                                           [&](const ir::Node* u) { return u != r; });
      if (!elsewhere) continue;
      stored.push_back(k);
      taken.push_back(v);
      names.push_back(g.unique_value_name(v->name + ".unfused"));
      types.push_back(v->type);
    }
    ExprProgram prog = program_of(*p);
    std::vector<ExprOutput> outs = {prog.outputs[reduced]};
    for (size_t k : stored) outs.push_back(prog.outputs[k]);
    prog.outputs = std::move(outs);
    prog.validate();

    Attrs attrs;
    attrs.set("program", prog.body());
    attrs.set("reduce", std::string(ir::op_name(r->op)));
    attrs.set("axes", r->attrs.ints("axes", {}));
    attrs.set("keepdims", r->attrs.i("keepdims", 1));
    // At p's place: its operands come before it, and r (whose only operand p makes) after it.
    g.set_insertion_point(p);
    ir::Node* node = g.add_node_typed(ir::OpKind::FusedReduce, p->inputs, std::move(attrs), names, types,
                                      "fused." + r->name);
    g.clear_insertion_point();
    take_over_values(node, taken);
    g.remove_node(r);
    g.remove_node(p);
    ++fused;
  }
  return fused;
}

}  // namespace dlc::passes
