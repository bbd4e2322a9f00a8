// Cast outputs (cast_outputs.h): narrowing Casts of fused results folded into the fused node.
#include "passes/cast_outputs.h"

#include <algorithm>

#include "dlc/expr_program.h"
#include "passes/fused_program.h"

namespace dlc::passes {

namespace {

bool is_fused(const ir::Node* n) {
  return n && (n->op == ir::OpKind::FusedElementwise || n->op == ir::OpKind::FusedReduce);
}

// Whether `cast` narrows a stored (not reduced) f32 result of a fused node to f16/bf16.
bool foldable(const ir::Node& cast) {
  if (cast.op != ir::OpKind::Cast || cast.inputs.size() != 1 || cast.outputs.size() != 1) return false;
  const ir::Value* x = cast.inputs[0];
  if (!x || !is_fused(x->producer) || x->type.dtype != DType::F32 || !is_half(cast.outputs[0]->type.dtype))
    return false;
  return !(x->producer->op == ir::OpKind::FusedReduce && x->producer_output == 0);  // the reduced one
}

}  // namespace

int64_t fold_casts_into_fused_outputs(ir::Graph& g) {
  int64_t folded = 0;
  for (ir::Node* cast : g.nodes()) {
    if (!foldable(*cast)) continue;
    ir::Value* x = cast->inputs[0];
    ir::Node* f = x->producer;
    ExprProgram p = program_of(*f);
    const size_t k = size_t(x->producer_output);
    const DType to = cast->outputs[0]->type.dtype;
    p.outputs.push_back({cast->outputs[0]->name, p.cast(p.outputs[k].value, to), to});
    std::vector<ir::Value*> results(f->outputs.begin(), f->outputs.end());
    results.push_back(cast->outputs[0]);
    // The f32 result goes when the Cast was its only reader (a FusedReduce keeps its reduction,
    // result 0).
    const bool reduction = f->op == ir::OpKind::FusedReduce && k == 0;
    if (!reduction && !g.is_pinned(x) && g.users(x).size() == 1) {
      p.outputs.erase(p.outputs.begin() + std::ptrdiff_t(k));
      results.erase(results.begin() + std::ptrdiff_t(k));
    }
    p.validate();
    // The new node takes over the Cast's result; the Cast, left with a placeholder, goes.
    cast->inputs[0] = nullptr;
    replace_fused_node(g, f, std::vector<ir::Value*>(f->inputs.begin(), f->inputs.end()), p, results);
    g.remove_node(cast);
    ++folded;
  }
  return folded;
}

}  // namespace dlc::passes
