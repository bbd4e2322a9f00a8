// The gradient context rules emit through, and the table that finds a rule (passes/grad/rules.def).
#include "passes/grad_rules.h"

#include "passes/grad/rules.h"

#include "dlc/error.h"

namespace dlc::passes {

using ir::OpKind;

ir::Value* GradContext::emit(OpKind op, std::vector<ir::Value*> inputs, Attrs attrs) {
  return emit_multi(op, std::move(inputs), std::move(attrs), 1)[0];
}

std::vector<ir::Value*> GradContext::emit_multi(OpKind op, std::vector<ir::Value*> inputs, Attrs attrs,
                                                int outputs) {
  // Output i > 0 is named after output 0, so the names of one node never collide.
  std::vector<std::string> names = {g_.unique_value_name(node_.name + ".grad")};
  for (int i = 1; i < outputs; ++i) names.push_back(g_.unique_value_name(names[0] + "." + std::to_string(i)));
  return g_.add_node(op, std::move(inputs), std::move(attrs), names, node_.name + ".grad")->outputs;
}

ir::Value* GradContext::constant(Tensor value) {
  return g_.add_constant(g_.unique_value_name(node_.name + ".grad_const"), std::move(value));
}

ir::Value* GradContext::zeros(const TensorType& t) { return expand(scalar(t.dtype, 0.0), t.shape); }

ir::Value* GradContext::expand(ir::Value* v, const Shape& shape) {
  if (v->type.shape == shape) return v;
  Attrs a;
  a.set("shape", shape);
  return emit(OpKind::Expand, {v}, a);
}

ir::Value* GradContext::cast(ir::Value* v, DType dtype) {
  if (v->type.dtype == dtype) return v;
  // v widened from a `dtype` value x (mixed precision's backward: a half gradient cast to f32,
  // and back for a half op): x, the same bits.
  if (const ir::Node* p = v->producer; p && p->op == OpKind::Cast && p->inputs.size() == 1 &&
                                       p->inputs[0]->type.dtype == dtype &&
                                       is_exact_widening(dtype, v->type.dtype))
    return p->inputs[0];
  Attrs a;
  a.set("to", std::string(dtype_name(dtype)));
  return emit(OpKind::Cast, {v}, a);
}

ir::Value* GradContext::reshape(ir::Value* v, const Shape& shape) {
  if (v->type.shape == shape) return v;
  Attrs a;
  a.set("shape", shape);
  return emit(OpKind::Reshape, {v}, a);
}

ir::Value* GradContext::reduce_to(ir::Value* v, const Shape& shape) {
  const Shape& from = v->type.shape;
  if (from == shape) return v;
  const size_t lead = from.size() - shape.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (shape[i - lead] == 1 && from[i] != 1)) axes.push_back(int64_t(i));
  if (!axes.empty()) {
    Attrs a;
    a.set("axes", axes);
    a.set("keepdims", int64_t(1));
    v = emit(OpKind::ReduceSum, {v}, a);
  }
  return reshape(v, shape);
}

GradRule find_grad_rule(OpKind op) {
  switch (op) {
#define DLC_GRAD_RULE(kind, fn) \
  case OpKind::kind:            \
    return grad::fn;
#include "passes/grad/rules.def"
#undef DLC_GRAD_RULE
    default:
      return nullptr;
  }
}

}  // namespace dlc::passes
