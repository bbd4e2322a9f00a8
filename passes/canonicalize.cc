// Canonicalization.
#include "passes/canonicalize.h"

#include <algorithm>
#include <cmath>

namespace dlc::passes {

namespace {

// Whether `v` is a constant whose every element is `want`; for floating-point constants the sign
// of zero must match too.
bool all_equal(const ir::Value* v, double want) {
  if (!v || v->role != ir::Role::Constant || !v->data) return false;
  const Tensor& t = *v->data;
  if (is_floating(t.type.dtype)) {
    const std::vector<double> values = t.as_double();
    return std::all_of(values.begin(), values.end(),
                       [&](double d) { return d == want && std::signbit(d) == std::signbit(want); });
  }
  if (is_integer(t.type.dtype)) {
    const std::vector<int64_t> values = t.as_int64();
    return std::all_of(values.begin(), values.end(), [&](int64_t i) { return i == int64_t(want); });
  }
  return false;
}

const ir::Node* producer_of(const ir::Value* v, ir::OpKind op) {
  return v && v->producer && v->producer->op == op ? v->producer : nullptr;
}

// A Transpose's permutation with the default (reversed axes) and negative axes resolved.
Shape permutation(const ir::Node& transpose) {
  const int64_t rank = transpose.inputs[0]->type.rank();
  Shape perm = transpose.attrs.ints("perm", {});
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  for (int64_t& p : perm)
    if (p < 0) p += rank;
  return perm;
}

// Rewires `n` past a producer of the same kind: Transpose(Transpose(x, p), q) = Transpose(x, p∘q)
// and Reshape(Reshape(x)) = Reshape(x). Returns whether it did.
bool merge_with_producer(ir::Node& n) {
  if (n.op != ir::OpKind::Transpose && n.op != ir::OpKind::Reshape) return false;
  const ir::Node* inner = producer_of(n.inputs[0], n.op);
  if (!inner) return false;
  if (n.op == ir::OpKind::Transpose) {
    const Shape p = permutation(*inner), q = permutation(n);
    Shape composed;
    for (int64_t axis : q) composed.push_back(p[size_t(axis)]);
    n.attrs.set("perm", composed);
  }
  n.inputs[0] = inner->inputs[0];
  return true;
}

bool is_identity_permutation(const Shape& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != int64_t(i)) return false;
  return true;
}

// The operand that `n`'s single result equals, or null.
ir::Value* forwarded_operand(const ir::Node& n) {
  const TensorType& result = n.outputs[0]->type;
  auto if_same_type = [&](ir::Value* x) { return x && x->type == result ? x : nullptr; };
  ir::Value* a = n.inputs[0];
  ir::Value* b = n.inputs.size() > 1 ? n.inputs[1] : nullptr;
  switch (n.op) {
    case ir::OpKind::Identity:
    case ir::OpKind::Cast:
    case ir::OpKind::Reshape:
      return if_same_type(a);
    case ir::OpKind::Transpose:
      return is_identity_permutation(permutation(n)) ? if_same_type(a) : nullptr;
    case ir::OpKind::Mul:
      return all_equal(b, 1.0) ? if_same_type(a) : all_equal(a, 1.0) ? if_same_type(b) : nullptr;
    case ir::OpKind::Div:
      return all_equal(b, 1.0) ? if_same_type(a) : nullptr;
    case ir::OpKind::Add:
      return all_equal(b, -0.0) ? if_same_type(a) : all_equal(a, -0.0) ? if_same_type(b) : nullptr;
    case ir::OpKind::Sub:
      return all_equal(b, 0.0) ? if_same_type(a) : nullptr;
    case ir::OpKind::Neg: {
      const ir::Node* inner = producer_of(a, ir::OpKind::Neg);
      return inner ? if_same_type(inner->inputs[0]) : nullptr;
    }
    default:
      return nullptr;
  }
}

}  // namespace

bool Canonicalize::run(ir::Graph& g) {
  int folded = 0, merged = 0;
  for (ir::Node* n : g.nodes()) {
    if (merge_with_producer(*n)) ++merged;
    ir::Value* to = forwarded_operand(*n);
    if (!to || g.is_pinned(n->outputs[0])) continue;
    g.replace_all_uses(n->outputs[0], to);
    g.remove_node(n);
    ++folded;
  }
  stats_["nodes_folded"] = folded;
  stats_["nodes_merged"] = merged;
  return folded + merged > 0;
}

}  // namespace dlc::passes
