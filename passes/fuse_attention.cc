// Attention fusion (fuse_attention.h).
#include "passes/fuse_attention.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "dlc/attention.h"
#include "passes/pass_switch.h"

namespace dlc::passes {

namespace {

using ir::OpKind;

// Whether `v` has `reader` as its one reader and is no graph output or state.
bool read_only_by(const ir::Graph& g, const ir::Value* v, const ir::Node* reader) {
  const std::vector<ir::Node*> users = g.users(v);
  return !g.is_pinned(v) && users.size() == 1 && users[0] == reader;
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

// A mask value: at most this (or -inf) masks a score, as masked_fill(-inf), finfo.min and the
// -10000 of older exports do; the fused kernels then give its key probability 0 exactly.
constexpr double kMaskedBelow = -1e4;

// Whether `masked(i, j)` over the last two dims [rows, keys] of a constant holding rows x keys
// elements is causal: masked exactly where j > i.
template <typename Masked>
bool is_causal_pattern(const Shape& shape, int64_t rows, int64_t keys, Masked&& masked) {
  if (shape.size() < 2 || shape[shape.size() - 2] != rows || shape.back() != keys ||
      num_elements(shape) != rows * keys)
    return false;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < keys; ++j)
      if (masked(i * keys + j) != (j > i)) return false;
  return true;
}

// The scores `mask` masks if it is a causal mask of [.., rows, keys] scores: Where(cond, scores,
// fill) or Where(cond, fill, scores) with a constant bool cond and a scalar fill ≤ kMaskedBelow,
// or Add(scores, m) / Add(m, scores) with a constant m of 0 (kept) and ≤ kMaskedBelow (masked);
// else null.
ir::Value* causally_masked(const ir::Node& mask, int64_t rows, int64_t keys) {
  const auto constant = [](const ir::Value* v) { return v->role == ir::Role::Constant && v->data; };
  if (mask.op == OpKind::Where && mask.inputs.size() == 3 && constant(mask.inputs[0]) &&
      mask.inputs[0]->type.dtype == DType::Bool) {
    const std::vector<double> cond = mask.inputs[0]->data->as_double();
    for (int fill_at : {1, 2}) {
      const double fill = scalar_constant(mask.inputs[fill_at]);
      if (!(fill <= kMaskedBelow)) continue;
      // Where(cond, fill, x) masks where cond holds; Where(cond, x, fill) where it does not.
      if (is_causal_pattern(mask.inputs[0]->type.shape, rows, keys,
                            [&](int64_t e) { return (cond[e] != 0) == (fill_at == 1); }))
        return mask.inputs[3 - fill_at];
    }
  }
  if (mask.op == OpKind::Add && mask.inputs.size() == 2)
    for (int m : {0, 1}) {
      const ir::Value* add = mask.inputs[m];
      if (!constant(add) || !is_floating(add->type.dtype)) continue;
      const std::vector<double> values = add->data->as_double();
      if (!std::all_of(values.begin(), values.end(), [](double x) { return x == 0 || x <= kMaskedBelow; }))
        continue;
      if (is_causal_pattern(add->type.shape, rows, keys, [&](int64_t e) { return values[e] != 0; }))
        return mask.inputs[1 - m];
    }
  return nullptr;
}

// The scores `scaling` scales and the factor if it is a Mul or Div of them by a scalar constant;
// else {null, 1}.
std::pair<ir::Value*, double> scaled(const ir::Node& scaling) {
  if ((scaling.op != OpKind::Mul && scaling.op != OpKind::Div) || scaling.inputs.size() != 2)
    return {nullptr, 1.0};
  for (size_t i : {size_t(0), size_t(1)}) {
    if (i == 0 && scaling.op == OpKind::Div) continue;  // k / x is no scaling of x
    const double k = scalar_constant(scaling.inputs[i]);
    if (!std::isnan(k) && scaling.inputs[1 - i]->type == scaling.outputs[0]->type)
      return {scaling.inputs[1 - i], scaling.op == OpKind::Div ? 1.0 / k : k};
  }
  return {nullptr, 1.0};
}

// The identity permutation of `rank` axes.
std::vector<int64_t> identity_axes(size_t rank) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), int64_t(0));
  return perm;
}

// The permutation of `rank` axes that swaps axes a and b.
std::vector<int64_t> swapped_axes(size_t rank, size_t a, size_t b) {
  std::vector<int64_t> perm = identity_axes(rank);
  std::swap(perm[a], perm[b]);
  return perm;
}

class Fuser {
 public:
  Fuser(ir::Graph& g, bool cuda_shapes_only) : g_(g), cuda_shapes_only_(cuda_shapes_only) {}
  int64_t left = 0;       // attention chains not fused for their head sizes
  int64_t seq_major = 0;  // fused ones with seq-major operands

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
    // The scores: MatMul(q, kᵀ), perhaps scaled and causally masked, in either order.
    const Shape& scores = softmax->inputs[0]->type.shape;
    const int64_t rows = scores[rank - 2], keys = scores[rank - 1];
    double scale = 1.0;
    bool scaled_once = false, causal = false;
    std::vector<ir::Node*> chain = {pv, softmax};
    ir::Value* x = softmax->inputs[0];
    ir::Node* qk = nullptr;
    while (!qk) {
      ir::Node* p = x->producer;
      if (!p || !read_only_by(g_, x, chain.back())) return false;
      if (p->op == OpKind::MatMul) {
        qk = p;
      } else if (auto [scores_in, k] = scaled(*p); scores_in && !scaled_once) {
        scale = k;
        scaled_once = true;
        x = scores_in;
      } else if (ir::Value* unmasked = causally_masked(*p, rows, keys);
                 unmasked && !causal && unmasked->type == p->outputs[0]->type) {
        causal = true;
        x = unmasked;
      } else {
        return false;
      }
      chain.push_back(p);
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
    if (causal) a.set("causal", int64_t(1));
    auto [k, k_perm] = untransposing(k_t);
    ir::Value* out = pv->outputs[0];
    // Seq-major operands where the heads were swapped out of the rows for the attention and back.
    ir::Node* o_transpose = nullptr;
    if (ir::Value* q_rows = heads_unswapped(q), *v_rows = heads_unswapped(v);
        q_rows && v_rows && k_perm == heads_swap(rank)) {
      const std::vector<ir::Node*> readers = g_.users(out);
      if (readers.size() == 1 && !g_.is_pinned(out) && heads_unswapped(readers[0]->outputs[0]) == out) {
        o_transpose = readers[0];
        q = q_rows;
        v = v_rows;
        a.set("seq_major", int64_t(1));
        ++seq_major;
      }
    }
    if (!o_transpose) k = transposed(k, k_perm, k_t->name);
    ir::Value* result = o_transpose ? o_transpose->outputs[0] : out;
    const std::string result_name = result->name;
    ir::Node* attention = g_.add_node(
        OpKind::Attention, {q, k, v}, a,
        {g_.unique_value_name(result_name + ".attention"), g_.unique_value_name(out->name + ".lse")},
        g_.unique_node_name(pv->name + ".attention"));
    g_.clear_insertion_point();
    if (o_transpose) chain.insert(chain.begin(), o_transpose);
    std::vector<ir::Value*> operands = {qk->inputs[0], qk->inputs[1], pv->inputs[1]};
    g_.replace_node(chain.front(), {attention->outputs[0]});  // a graph output keeps its name
    for (size_t i = 1; i < chain.size(); ++i) g_.remove_node(chain[i]);
    std::sort(operands.begin(), operands.end());
    operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
    for (ir::Value* x : operands) remove_unread_transpose(x);
    return true;
  }

 private:
  // The permutation swapping axes rank - 3 and rank - 2 (heads and sequence), or none below rank 3.
  static std::vector<int64_t> heads_swap(size_t rank) {
    return rank < 3 ? std::vector<int64_t>{} : swapped_axes(rank, rank - 3, rank - 2);
  }

  // x's source if x is a Transpose swapping heads and sequence, else null.
  static ir::Value* heads_unswapped(const ir::Value* x) {
    const ir::Node* t = x->producer;
    if (!t || t->op != OpKind::Transpose || t->inputs.size() != 1) return nullptr;
    const std::vector<int64_t> swap = heads_swap(x->type.shape.size());
    return !swap.empty() && t->attrs.ints("perm", {}) == swap ? t->inputs[0] : nullptr;
  }

  // k from kᵀ as {source, perm} with k = Transpose(source, perm): the last two axes of `k_t`
  // swapped back, through the Transpose that made it.
  static std::pair<ir::Value*, std::vector<int64_t>> untransposing(ir::Value* k_t) {
    const size_t rank = k_t->type.shape.size();
    if (const ir::Node* t = k_t->producer; t && t->op == OpKind::Transpose && t->inputs.size() == 1) {
      std::vector<int64_t> inner = t->attrs.ints("perm", {});
      if (inner.size() == rank) {
        // Transpose(Transpose(x, inner), swap) = Transpose(x, inner ∘ swap).
        std::swap(inner[rank - 1], inner[rank - 2]);
        return {t->inputs[0], inner};
      }
    }
    return {k_t, swapped_axes(rank, rank - 2, rank - 1)};
  }

  // Transpose(source, perm), or source for the identity; named after `name`.
  ir::Value* transposed(ir::Value* source, const std::vector<int64_t>& perm, const std::string& name) {
    if (perm == identity_axes(perm.size())) return source;
    Attrs a;
    a.set("perm", perm);
    return g_
        .add_node(OpKind::Transpose, {source}, a, {g_.unique_value_name(name + ".untransposed")},
                  g_.unique_node_name(name + ".untransposed"))
        ->outputs[0];
  }

  // Removes x's producer if it is a Transpose and nothing reads x any more (the fused chain's
  // kᵀ and, in the seq-major form, q's and v's head Transposes).
  void remove_unread_transpose(ir::Value* x) {
    if (x->producer && x->producer->op == OpKind::Transpose && g_.users(x).empty() && !g_.is_pinned(x))
      g_.remove_node(x->producer);
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
  stats_["attentions_seq_major"] = fuser.seq_major;
  return fused > 0;
}

}  // namespace dlc::passes
