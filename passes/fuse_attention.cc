// Attention fusion (fuse_attention.h).
#include "passes/fuse_attention.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "dlc/attention_kernels.h"
#include "passes/pass_switch.h"

namespace dlc::passes {

namespace {

using ir::OpKind;

// The node producing `v` if it is of op `op` and `v` has `reader` as its one reader and is no
// graph output or state; else null.
ir::Node* sole_producer(const ir::Graph& g, const ir::Value* v, OpKind op, const ir::Node* reader) {
  ir::Node* p = v ? v->producer : nullptr;
  if (!p || p->op != op || g.is_pinned(v)) return nullptr;
  const std::vector<ir::Node*> users = g.users(v);
  return users.size() == 1 && users[0] == reader ? p : nullptr;
}

// A plain MatMul (two operands, no epilogue, no transpose flags) of rank >= 2 operands with the
// same leading dims.
bool is_plain_batched_matmul(const ir::Node& n) {
  if (n.inputs.size() != 2 || !n.attrs.empty()) return false;
  const Shape &a = n.inputs[0]->type.shape, &b = n.inputs[1]->type.shape;
  return a.size() >= 2 && a.size() == b.size() && std::equal(a.begin(), a.end() - 2, b.begin());
}

// The value of a scalar floating-point constant, or NaN.
double scalar_constant(const ir::Value* v) {
  if (v->role != ir::Role::Constant || !v->data || v->type.numel() != 1 || !is_floating(v->type.dtype))
    return std::nan("");
  return v->data->as_double()[0];
}

// The permutation swapping the last two of `rank` axes.
std::vector<int64_t> swap_last_two(size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

class Fuser {
 public:
  Fuser(ir::Graph& g, bool cuda_shapes_only) : g_(g), cuda_shapes_only_(cuda_shapes_only) {}
  int64_t left = 0;  // attention chains not fused for their head sizes

  // Fuses the chain ending in `softmax` if it is attention's; returns whether it did.
  bool fuse(ir::Node* softmax) {
    const ir::Value* probs = softmax->outputs[0];
    const size_t rank = probs->type.shape.size();
    const int64_t axis = softmax->attrs.i("axis", -1);
    if (rank < 2 || (axis != -1 && axis != int64_t(rank) - 1)) return false;
    // The reader of the probabilities: MatMul(probs, v).
    const std::vector<ir::Node*> users = g_.users(probs);
    if (users.size() != 1 || g_.is_pinned(probs)) return false;
    ir::Node* pv = users[0];
    if (pv->op != OpKind::MatMul || pv->inputs[0] != probs || !is_plain_batched_matmul(*pv)) return false;
    // The scores: MatMul(q, kᵀ), perhaps scaled.
    double scale = 1.0;
    ir::Node* scaling = nullptr;
    ir::Node* qk = sole_producer(g_, softmax->inputs[0], OpKind::MatMul, softmax);
    if (!qk) {
      for (OpKind op : {OpKind::Mul, OpKind::Div}) {
        scaling = sole_producer(g_, softmax->inputs[0], op, softmax);
        if (scaling) break;
      }
      if (!scaling || scaling->inputs.size() != 2) return false;
      for (size_t i : {size_t(0), size_t(1)}) {
        if (i == 0 && scaling->op == OpKind::Div) continue;  // k / x is no scaling of x
        const double k = scalar_constant(scaling->inputs[i]);
        ir::Node* mm = sole_producer(g_, scaling->inputs[1 - i], OpKind::MatMul, scaling);
        if (std::isnan(k) || !mm || scaling->outputs[0]->type != mm->outputs[0]->type) continue;
        qk = mm;
        scale = scaling->op == OpKind::Div ? 1.0 / k : k;
        break;
      }
      if (!qk) return false;
    }
    if (!is_plain_batched_matmul(*qk) || qk->inputs[0]->type.shape.size() != rank) return false;
    ir::Value *q = qk->inputs[0], *k_t = qk->inputs[1], *v = pv->inputs[1];
    if (!std::equal(q->type.shape.begin(), q->type.shape.end() - 2, v->type.shape.begin()) ||
        q->type.dtype != v->type.dtype || !is_floating(q->type.dtype))
      return false;
    if (cuda_shapes_only_ && (!cuda_attention_head_size(q->type.shape.back()) ||
                              !cuda_attention_head_size(v->type.shape.back()))) {
      ++left;
      return false;
    }

    g_.set_insertion_point(pv);
    Attrs a;
    a.set("scale", scale);
    ir::Value* out = pv->outputs[0];
    const std::string out_name = out->name;
    ir::Node* attention =
        g_.add_node(OpKind::Attention, {q, untransposed(k_t), v}, a,
                    {g_.unique_value_name(out_name + ".attention"), g_.unique_value_name(out_name + ".lse")},
                    g_.unique_node_name(pv->name + ".attention"));
    g_.clear_insertion_point();
    g_.replace_all_uses(out, attention->outputs[0]);
    for (ir::Node* n : {pv, softmax, scaling, qk})
      if (n) g_.remove_node(n);
    g_.rename_value(attention->outputs[0], out_name);  // a graph output keeps its name
    return true;
  }

 private:
  // k from kᵀ: the last two axes of `k_t` swapped back, through the Transpose that made it.
  ir::Value* untransposed(ir::Value* k_t) {
    const size_t rank = k_t->type.shape.size();
    std::vector<int64_t> perm = swap_last_two(rank);
    ir::Value* source = k_t;
    if (const ir::Node* t = k_t->producer; t && t->op == OpKind::Transpose && t->inputs.size() == 1) {
      std::vector<int64_t> inner = t->attrs.ints("perm", {});
      if (inner.size() == rank) {
        // Transpose(Transpose(x, inner), swap) = Transpose(x, inner ∘ swap).
        std::swap(inner[rank - 1], inner[rank - 2]);
        perm = inner;
        source = t->inputs[0];
      }
    }
    std::vector<int64_t> identity(rank);
    std::iota(identity.begin(), identity.end(), int64_t(0));
    if (perm == identity) return source;
    Attrs a;
    a.set("perm", perm);
    return g_
        .add_node(OpKind::Transpose, {source}, a, {g_.unique_value_name(k_t->name + ".untransposed")},
                  g_.unique_node_name(k_t->name + ".untransposed"))
        ->outputs[0];
  }

  ir::Graph& g_;
  bool cuda_shapes_only_;
};

}  // namespace

bool wants_fused_attention(const std::string& attention, const std::string& device,
                           const std::string& precision) {
  return switched_on("--attention", attention, "fused", "unfused", device, precision);
}

bool FuseAttention::run(ir::Graph& g) {
  // The Softmax nodes first: a fusion removes nodes after its Softmax, never another Softmax.
  std::vector<ir::Node*> softmaxes;
  for (ir::Node* n : g.nodes())
    if (n->op == OpKind::Softmax) softmaxes.push_back(n);
  Fuser fuser(g, cuda_shapes_only_);
  int64_t fused = 0;
  for (ir::Node* n : softmaxes)
    if (fuser.fuse(n)) ++fused;
  stats_["attentions_fused"] = fused;
  stats_["attentions_left"] = fuser.left;
  return fused > 0;
}

}  // namespace dlc::passes
