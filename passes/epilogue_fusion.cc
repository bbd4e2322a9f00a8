// Epilogue fusion (epilogue_fusion.h): Transposes and scale / bias / residual / Relu epilogues
// folded into MatMul, residuals and Relus into convolutions, a Relu and its gradient into batch
// normalization.
#include "passes/epilogue_fusion.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>

#include "passes/value_takeover.h"

namespace dlc::passes {

namespace {

using ir::OpKind;

// Whether `n` is a Transpose that swaps only the last two dims.
bool swaps_last_two(const ir::Node& n) {
  if (n.op != OpKind::Transpose || n.outputs.size() != 1 || !n.inputs[0]) return false;
  const std::vector<int64_t> perm = n.attrs.ints("perm", {});
  const size_t r = perm.size();
  if (r < 2 || size_t(n.inputs[0]->type.rank()) != r) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (perm[i] != int64_t(i)) return false;
  return perm[r - 2] == int64_t(r - 1) && perm[r - 1] == int64_t(r - 2);
}

bool is_matmul(const ir::Node* n) { return n && n->op == OpKind::MatMul; }
bool has_bias(const ir::Node& mm) { return mm.inputs.size() > 2 && mm.inputs[2]; }
bool has_residual(const ir::Node& mm) { return mm.inputs.size() > 3 && mm.inputs[3]; }
bool has_activation(const ir::Node& n) { return n.attrs.has("activation"); }
bool matrix_operands(const ir::Node& mm) {
  return mm.inputs[0]->type.rank() >= 2 && mm.inputs[1]->type.rank() >= 2;
}

// Sets a transpose flag (an unset flag is 0, so 0 is left out).
void set_flag(Attrs& attrs, const char* flag, bool on) {
  if (on)
    attrs.set(flag, int64_t(1));
  else
    attrs.erase(flag);
}

void toggle(Attrs& attrs, const char* flag) { set_flag(attrs, flag, attrs.i(flag, 0) == 0); }

// Whether a bias of shape `b` is a MatMul bias for a result of shape `out`: [n] or [1, …, 1, n]
// along its last dim.
bool is_row_bias(const Shape& b, const Shape& out) {
  return !b.empty() && b.size() <= out.size() && b.back() == out.back() &&
         std::all_of(b.begin(), b.end() - 1, [](int64_t d) { return d == 1; });
}

class EpilogueFuser {
 public:
  explicit EpilogueFuser(ir::Graph& g) : g_(g) {}

  EpilogueFusionCounts run() {
    EpilogueFusionCounts c;
    for (ir::Node* n : g_.nodes())
      if (swaps_last_two(*n) && fold_operand_transpose(n)) ++c.operand_transposes;
    for (ir::Node* n : g_.nodes())
      if (swaps_last_two(*n) && fold_result_transpose(n)) ++c.result_transposes;
    // Epilogues in schedule order, so a scale then a bias both fold into one MatMul.
    const std::vector<ir::Node*> nodes = g_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) pos_[nodes[i]] = int(i);
    for (ir::Node* n : nodes) {
      if (n->op == OpKind::Mul && fold_scale(n))
        ++c.scales;
      else if (n->op == OpKind::Mul && fold_operand_scale(n))
        ++c.operand_scales;
      else if (n->op == OpKind::Cast && fold_half_scale(n))
        ++c.half_scales;
      else if (n->op == OpKind::Cast && fold_half_operand_scale(n))
        ++c.half_operand_scales;
      else if (n->op == OpKind::Cast && fold_half_bias(n))
        ++c.half_biases;
      else if (n->op == OpKind::Add)
        fold_add(n, &c);
      else if (n->op == OpKind::Relu)
        fold_activation(n, &c);
      else if (n->op == OpKind::BatchNormGrad && fold_relu_grad(n))
        ++c.norm_relu_grads;
    }
    return c;
  }

 private:
  // The producer of `v` when it is one of `ops` and `v` has no user but `consumer` and is not
  // kept.
  ir::Node* sole_producer(ir::Value* v, const ir::Node* consumer, std::initializer_list<OpKind> ops) const {
    if (!v || !v->producer || g_.is_pinned(v)) return nullptr;
    if (std::find(ops.begin(), ops.end(), v->producer->op) == ops.end()) return nullptr;
    return sole_user(v, consumer) ? v->producer : nullptr;
  }

  // `mm` takes over the result of `consumer` (value_takeover.h), which then goes with mm's old
  // result.
  void absorb(ir::Node* mm, ir::Node* consumer) {
    take_over_values(mm, {consumer->outputs[0]});
    g_.remove_node(consumer);
  }

  // Every reader of `y` is a MatMul taking it as operand a or b (not a bias or residual).
  bool read_only_as_matmul_operand(const ir::Value* y) const {
    const std::vector<ir::Node*> users = g_.users(y);
    if (g_.is_pinned(y) || users.empty()) return false;
    for (const ir::Node* u : users)
      if (!is_matmul(u) || std::find(u->inputs.begin() + 2, u->inputs.end(), y) != u->inputs.end())
        return false;
    return true;
  }

  // The nodes of a chain the rewrite has made dead (each read only by the next, the last's result
  // taken over or no longer read): unlinked from each other, then removed.
  void remove_chain(std::initializer_list<ir::Node*> chain) {
    for (ir::Node* dead : chain) std::fill(dead->inputs.begin(), dead->inputs.end(), nullptr);
    for (ir::Node* dead : chain) g_.remove_node(dead);
  }

  // Rewrite 1: every user of the Transpose is a MatMul reading it as an operand.
  bool fold_operand_transpose(ir::Node* t) {
    ir::Value* y = t->outputs[0];
    if (!read_only_as_matmul_operand(y)) return false;
    for (ir::Node* u : g_.users(y))
      for (int i = 0; i < 2; ++i)
        if (u->inputs[size_t(i)] == y) {
          u->inputs[size_t(i)] = t->inputs[0];
          toggle(u->attrs, i == 0 ? "transpose_a" : "transpose_b");
        }
    g_.remove_node(t);
    return true;
  }

  // Rewrite 2: (op(A) op(B))^T = op(B)^T op(A)^T, so MatMul(b, a) with ta' = !tb, tb' = !ta.
  bool fold_result_transpose(ir::Node* t) {
    ir::Node* mm = sole_producer(t->inputs[0], t, {OpKind::MatMul});
    if (!mm || has_bias(*mm) || has_residual(*mm) || has_activation(*mm) || !matrix_operands(*mm))
      return false;
    std::swap(mm->inputs[0], mm->inputs[1]);
    const bool ta = mm->attrs.i("transpose_a", 0) != 0, tb = mm->attrs.i("transpose_b", 0) != 0;
    set_flag(mm->attrs, "transpose_a", !tb);
    set_flag(mm->attrs, "transpose_b", !ta);
    absorb(mm, t);
    return true;
  }

  // The producer, one of `ops` (a MatMul with matrix operands), whose result `n` (an elementwise
  // op of the same result type) reads as operand `i`, used nowhere else, with no epilogue that
  // must come after n's (a residual or an activation; the caller checks the bias).
  ir::Node* epilogue_producer(ir::Node* n, size_t i, std::initializer_list<OpKind> ops) const {
    ir::Node* p = sole_producer(n->inputs[i], n, ops);
    if (!p || has_residual(*p) || has_activation(*p) || (is_matmul(p) && !matrix_operands(*p)) ||
        !is_floating(n->outputs[0]->type.dtype) || n->outputs[0]->type != p->outputs[0]->type)
      return nullptr;
    return p;
  }

  bool fold_scale(ir::Node* mul) {
    for (size_t i = 0; i < 2; ++i) {
      ir::Node* mm = epilogue_producer(mul, i, {OpKind::MatMul});
      const ir::Value* k = mul->inputs[1 - i];
      if (!mm || has_bias(*mm) || k->role != ir::Role::Constant || !k->data || k->type.numel() != 1 ||
          k->type.dtype != mm->outputs[0]->type.dtype)
        continue;
      mm->attrs.set("alpha", mm->attrs.f("alpha", 1.0) * k->data->as_double()[0]);
      absorb(mm, mul);
      return true;
    }
    return false;
  }

  // The power-of-two scalar constant `mul` multiplies by, and the other operand; null when it has
  // no such operand.
  static std::pair<double, ir::Value*> power_of_two_scale(const ir::Node* mul) {
    for (size_t i = 0; i < 2; ++i) {
      const ir::Value* k = mul->inputs[i];
      if (k->role != ir::Role::Constant || !k->data || k->type.numel() != 1 || !is_floating(k->type.dtype))
        continue;
      const double v = k->data->as_double()[0];
      int exponent = 0;
      if (v != 0 && std::isfinite(v) && std::abs(std::frexp(v, &exponent)) == 0.5)
        return {v, mul->inputs[1 - i]};
    }
    return {0, nullptr};
  }

  // The MatMuls reading `y` read `x` instead, alpha multiplied by k per operand: (k x) B = k (x B).
  void scale_readers(ir::Value* y, ir::Value* x, double k) {
    for (ir::Node* u : g_.users(y))
      for (size_t i = 0; i < 2; ++i)
        if (u->inputs[i] == y) {
          u->inputs[i] = x;
          u->attrs.set("alpha", u->attrs.f("alpha", 1.0) * k);
        }
  }

  // Rewrite 6: MatMul(Mul(x, k), b) -> MatMul(x, b) with alpha *= k, for a power-of-two scalar k
  // and a Mul whose readers are all MatMuls taking it as an operand (attention's score gradient,
  // scaled for the query and key gradients): exact, barring overflow and subnormals.
  bool fold_operand_scale(ir::Node* mul) {
    const auto [k, x] = power_of_two_scale(mul);
    ir::Value* y = mul->outputs[0];
    if (!x || x->type != y->type || !read_only_as_matmul_operand(y)) return false;
    scale_readers(y, x, k);
    g_.remove_node(mul);
    return true;
  }

  // The same across mixed precision's casts: MatMul(Cast_half(Mul(Cast_f32(h), k)), b) ->
  // MatMul(h, b) with alpha *= k (the half score gradient, widened for the scale and narrowed
  // for the half MatMuls). The Cast, Mul and Cast go.
  bool fold_half_operand_scale(ir::Node* narrow) {
    ir::Value* y = narrow->outputs[0];
    if (!is_half(y->type.dtype)) return false;
    ir::Node* mul = sole_producer(narrow->inputs[0], narrow, {OpKind::Mul});
    if (!mul) return false;
    const auto [k, wide] = power_of_two_scale(mul);
    ir::Node* widen = wide ? sole_producer(wide, mul, {OpKind::Cast}) : nullptr;
    if (!widen || widen->inputs[0]->type != y->type || !read_only_as_matmul_operand(y)) return false;
    scale_readers(y, widen->inputs[0], k);
    remove_chain({widen, mul, narrow});
    return true;
  }

  // A half epilogue's chain Cast_half(op(Cast_f32(MatMul_half), other)) (either operand order)
  // ending in `narrow`, each intermediate read only by the next, op f32 and of kind `kind`, the
  // MatMul's result of the outer Cast's type, with no epilogue of its own and matrix operands.
  struct HalfEpilogue {
    ir::Node *widen = nullptr, *op = nullptr, *mm = nullptr;
    ir::Value* other = nullptr;
  };
  // The chains ending in `narrow` (none, one, or one per operand order).
  std::vector<HalfEpilogue> half_epilogues(ir::Node* narrow, OpKind kind) const {
    std::vector<HalfEpilogue> found;
    ir::Node* op =
        is_half(narrow->outputs[0]->type.dtype) ? sole_producer(narrow->inputs[0], narrow, {kind}) : nullptr;
    if (!op || op->outputs[0]->type.dtype != DType::F32 || op->inputs.size() != 2) return found;
    for (size_t i = 0; i < 2; ++i) {
      ir::Node* widen = sole_producer(op->inputs[i], op, {OpKind::Cast});
      ir::Node* mm = widen ? sole_producer(widen->inputs[0], widen, {OpKind::MatMul}) : nullptr;
      if (mm && !has_bias(*mm) && !has_residual(*mm) && !has_activation(*mm) && matrix_operands(*mm) &&
          mm->outputs[0]->type == narrow->outputs[0]->type && op->inputs[1 - i] != op->inputs[i])
        found.push_back({widen, op, mm, op->inputs[1 - i]});
    }
    return found;
  }

  // Cast_half(Mul(Cast_f32(MatMul_half), k)) -> MatMul_half with alpha *= k (rewrite 3); the
  // MatMul takes over the outer Cast's result.
  bool fold_half_scale(ir::Node* narrow) {
    for (const HalfEpilogue& e : half_epilogues(narrow, OpKind::Mul)) {
      const ir::Value* k = e.other;
      if (k->role != ir::Role::Constant || !k->data || k->type.numel() != 1 || !is_floating(k->type.dtype))
        continue;
      e.mm->attrs.set("alpha", e.mm->attrs.f("alpha", 1.0) * k->data->as_double()[0]);
      take_over_values(e.mm, {narrow->outputs[0]});
      remove_chain({e.widen, e.op, narrow});  // they now only feed each other
      return true;
    }
    return false;
  }

  // Cast_half(Add(Cast_f32(MatMul_half), b)) -> MatMul_half(…, Cast_half(b)) for an f32 bias b
  // along the result's last dim that exists before the MatMul (a parameter): the product plus
  // the bias rounded to half, rounded once, as autocast's addmm computes it, where mixed
  // precision's f32 Add rounded the product, added the f32 bias and rounded again. The half
  // bias is a Cast before the MatMul; the Cast, Add and Cast go.
  bool fold_half_bias(ir::Node* narrow) {
    for (const HalfEpilogue& e : half_epilogues(narrow, OpKind::Add)) {
      ir::Value* bias = e.other;
      if (bias->producer || bias->type.dtype != DType::F32 ||
          !is_row_bias(bias->type.shape, e.mm->outputs[0]->type.shape))
        continue;
      Attrs to;
      to.set("to", std::string(dtype_name(narrow->outputs[0]->type.dtype)));
      g_.set_insertion_point(e.mm);
      ir::Node* cast = g_.add_node(OpKind::Cast, {bias}, to, {g_.unique_value_name(bias->name + ".half")},
                                   g_.unique_node_name(bias->name + ".to_half"));
      g_.clear_insertion_point();
      ir::Node* mm = e.mm;
      mm->inputs.resize(3);
      mm->inputs[2] = cast->outputs[0];
      take_over_values(mm, {narrow->outputs[0]});
      remove_chain({e.widen, e.op, narrow});
      return true;
    }
    return false;
  }

  // Add(MatMul, v) -> v as the MatMul's bias (input 2, when it has none: [n] or [1, …, 1, n]
  // along the result's last dim) or residual (input 3: the result's type); Add(Conv |
  // ConvTranspose, v) -> v as the residual (their bias input is per channel). The producer stays
  // where it is, so v must be computed before it; of two such operands, the later one takes the
  // earlier one's result.
  bool fold_add(ir::Node* add, EpilogueFusionCounts* c) {
    for (size_t i = 0; i < 2; ++i) {
      ir::Node* p = epilogue_producer(add, i, {OpKind::MatMul, OpKind::Conv, OpKind::ConvTranspose});
      ir::Value* v = add->inputs[1 - i];
      if (!p || v == add->inputs[i] || v->type.dtype != p->outputs[0]->type.dtype) continue;
      const Shape& b = v->type.shape;
      const Shape& out = p->outputs[0]->type.shape;
      const bool row = is_matmul(p) && !has_bias(*p) && is_row_bias(b, out);
      const size_t slot = row ? 2 : b == out ? 3 : 0;
      if (slot == 0 || (v->producer && pos_.at(v->producer) > pos_.at(p))) continue;
      p->inputs.resize(std::max(p->inputs.size(), slot + 1));
      p->inputs[slot] = v;
      absorb(p, add);
      ++(slot == 2 ? c->biases : is_matmul(p) ? c->residuals : c->conv_residuals);
      return true;
    }
    return false;
  }

  // Rewrite 4: Relu(MatMul | Conv | BatchNormalization's y) -> the producer with activation =
  // "relu", after its bias (Conv: its own bias input), scale and residual; the pre-activation
  // value has no other user, so in training ReluGrad reads the Relu result, which the producer
  // then computes.
  bool fold_activation(ir::Node* relu, EpilogueFusionCounts* c) {
    ir::Value* x = relu->inputs[0];
    ir::Node* p = sole_producer(x, relu, {OpKind::MatMul, OpKind::Conv, OpKind::BatchNormalization});
    if (!p || has_activation(*p) || p->outputs[0] != x || !is_floating(x->type.dtype) ||
        relu->outputs[0]->type != x->type)
      return false;
    p->attrs.set("activation", std::string("relu"));
    absorb(p, relu);
    ++(p->op == OpKind::MatMul ? c->activations
       : p->op == OpKind::Conv ? c->conv_activations
                               : c->norm_activations);
    return true;
  }

  // Rewrite 5: BatchNormGrad(ReluGrad(dy, y), x, scale) -> BatchNormGrad(dy, x, scale, y) with
  // activation = "relu" (the kernel masks dy as it reads it), for a ReluGrad result used nowhere
  // else; the BatchNormGrad stays where it is, after the ReluGrad's operands.
  bool fold_relu_grad(ir::Node* bn_grad) {
    ir::Value* g = bn_grad->inputs[0];
    if (has_activation(*bn_grad) || bn_grad->inputs.size() > 3 || !g || !g->producer ||
        g->producer->op != OpKind::ReluGrad || g_.is_pinned(g) || !sole_user(g, bn_grad) ||
        bn_grad->inputs[1] == g || bn_grad->inputs[2] == g)
      return false;
    ir::Node* relu_grad = g->producer;
    bn_grad->inputs[0] = relu_grad->inputs[0];
    bn_grad->inputs.push_back(relu_grad->inputs[1]);
    bn_grad->attrs.set("activation", std::string("relu"));
    g_.remove_node(relu_grad);
    return true;
  }

  // Whether `consumer` is the only node reading `v`.
  bool sole_user(ir::Value* v, const ir::Node* consumer) const {
    const std::vector<ir::Node*> users = g_.users(v);
    return users.size() == 1 && users[0] == consumer;
  }

  ir::Graph& g_;
  std::map<const ir::Node*, int> pos_;
};

}  // namespace

EpilogueFusionCounts fuse_epilogues(ir::Graph& g) {
  // Dead users would block folds (autodiff differentiates an attention scale's constant too,
  // reading the MatMul result); the dce after fusion would remove them anyway.
  const int dead = g.remove_dead_nodes();
  EpilogueFusionCounts c = EpilogueFuser(g).run();
  c.dead_nodes = dead;
  return c;
}

}  // namespace dlc::passes
