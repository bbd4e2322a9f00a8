// Mixed precision: half-precision MatMul and convolutions between casts.
#include "passes/mixed_precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "dlc/error.h"
#include "passes/loss_scaling.h"
#include "passes/value_takeover.h"

namespace dlc::passes {

namespace {

// MatMul, the convolutions and Attention (whose lse result stays f32).
bool runs_in_half(const ir::Node& n) {
  if (n.op != ir::OpKind::MatMul && n.op != ir::OpKind::Conv && n.op != ir::OpKind::ConvTranspose &&
      n.op != ir::OpKind::Attention)
    return false;
  for (const ir::Value* v : n.inputs)
    if (v && v->type.dtype != DType::F32) return false;
  return n.outputs[0]->type.dtype == DType::F32;
}

// Whether `v` is a Cast of a `half` value to f32.
bool widened_from(const ir::Value* v, DType half) {
  const ir::Node* p = v->producer;
  return p && p->op == ir::OpKind::Cast && p->inputs[0]->type.dtype == half && v->type.dtype == DType::F32;
}

// A Relu, MaxPool (without indices) or AveragePool: one operand, one result, computed in f32
// from a half operand and rounded (runtime/cpu/widen.h; cuDNN's half pooling).
bool runs_in_half_on_widened(const ir::Node& n) {
  return (n.op == ir::OpKind::Relu || n.op == ir::OpKind::MaxPool || n.op == ir::OpKind::AveragePool) &&
         n.inputs.size() == 1 &&
         std::count_if(n.outputs.begin(), n.outputs.end(), [](const ir::Value* v) { return v != nullptr; }) ==
             1;
}

// Whether `v` is a widened half value, or a Relu or pooling of one (ResNet's stem: the batch
// norm's half result, its Relu, the max pool).
bool has_half_source(const ir::Value* v, DType half) {
  if (widened_from(v, half)) return true;
  const ir::Node* p = v->producer;
  return p && runs_in_half_on_widened(*p) && has_half_source(p->inputs[0], half);
}

// An Add of two half values (each a widened half result, or a Relu or pooling of one: ResNet's
// residual connection) runs in half, as autocast's add of two half tensors does: f32 inside, the
// sum rounded. This is the one rounding the f32 graph did not have (the residual stream, and its
// gradient, are then half). An Add with an f32 operand (a transformer's residual stream, from the
// f32 embedding) stays f32, as autocast's type promotion keeps it.
bool adds_half_values(const ir::Node& n, DType half) {
  return n.op == ir::OpKind::Add && n.inputs.size() == 2 && n.outputs[0]->type.dtype == DType::F32 &&
         has_half_source(n.inputs[0], half) && has_half_source(n.inputs[1], half);
}

// A Transpose or Reshape: the result holds the operand's elements, moved.
bool moves_elements_only(const ir::Node& n) {
  return (n.op == ir::OpKind::Transpose || n.op == ir::OpKind::Reshape) && n.inputs.size() == 1;
}

Attrs cast_to(DType t) {
  Attrs a;
  a.set("to", std::string(dtype_name(t)));
  return a;
}

// `n` as op of `inputs` and `attrs` before the insertion point, its first result a new value (the
// caller rewires n's readers) and its further results n's own (a layer norm's statistics,
// Attention's lse: they keep their values and f32).
ir::Node* rebuild_in_half(ir::Graph& g, ir::Node* n, const std::vector<ir::Value*>& inputs,
                          const Attrs& attrs) {
  std::vector<std::string> names{g.unique_value_name(n->outputs[0]->name + ".half")};
  for (size_t o = 1; o < n->outputs.size(); ++o)
    names.push_back(n->outputs[o] ? g.unique_value_name(n->outputs[o]->name + ".half") : "");
  ir::Node* rebuilt = g.add_node(n->op, inputs, attrs, names, n->name + ".half");
  std::vector<ir::Value*> others(n->outputs.begin(), n->outputs.end());
  others[0] = nullptr;
  take_over_values(rebuilt, others);
  return rebuilt;
}

// The half-precision copies of f32 values, one per value, shared by its readers.
class HalfValues {
 public:
  HalfValues(ir::Graph& g, DType half) : g_(g), half_(half) {}

  // The half of `v`, added before the graph's insertion point. The half of a value widened from
  // the half type is what was widened (a round trip changes no bit: MatMul.half -> Cast f32 ->
  // Reshape -> Cast half needs neither cast). A Transpose's or Reshape's result is the same op on
  // its input's half (rounding commutes with moving elements, so the values are the same bits): a
  // Transpose then moves half the bytes, epilogue fusion can fold it into the MatMul that reads it
  // as a transpose flag, which a Cast between them would stop, and the Cast lands next to the
  // op that made the value, where fusion can make it that op's output.
  ir::Value* of(ir::Value* v) {
    if (ir::Value* h = half_of_[v]) return h;
    const ir::Node* p = v->producer;
    ir::Value* h = nullptr;
    if (widened_from(v, half_)) {
      h = p->inputs[0];
      ++round_trips_;
    } else if (p && runs_in_half_on_widened(*p) && has_half_source(p->inputs[0], half_)) {
      // A Relu or pooling of a widened half value: the same op on the half value (f32 inside, the
      // result rounded: the same numbers; a Relu of a negative that rounds to -0 keeps the sign),
      // so a batch norm's Relu stays in half (epilogue fusion folds it in) and ResNet's stem
      // pools in half.
      h = g_.add_node(p->op, {of(p->inputs[0])}, p->attrs, {g_.unique_value_name(v->name + ".half")},
                      p->name + ".half")
              ->outputs[0];
      ++(p->op == ir::OpKind::Relu ? relus_ : pools_);
    } else if (p && moves_elements_only(*p) && p->inputs[0]->type.dtype == DType::F32) {
      h = g_.add_node(p->op, {of(p->inputs[0])}, p->attrs, {g_.unique_value_name(v->name + ".half")},
                      p->name + ".half")
              ->outputs[0];
      ++moved_[p->op == ir::OpKind::Transpose ? 0 : 1];
    } else {
      h = g_.add_node(ir::OpKind::Cast, {v}, cast_to(half_), {g_.unique_value_name(v->name + ".half")},
                      v->name + ".to_half")
              ->outputs[0];
      ++casts_;
    }
    return half_of_[v] = h;
  }
  // Drops `v`'s entry before `v` is removed from the graph.
  void forget(ir::Value* v) { half_of_.erase(v); }
  int64_t casts() const { return casts_; }
  int64_t round_trips() const { return round_trips_; }
  int64_t transposes() const { return moved_[0]; }
  int64_t reshapes() const { return moved_[1]; }
  int64_t relus() const { return relus_; }
  int64_t pools() const { return pools_; }

 private:
  ir::Graph& g_;
  DType half_;
  std::map<ir::Value*, ir::Value*> half_of_;
  int64_t casts_ = 0, round_trips_ = 0, relus_ = 0, pools_ = 0, moved_[2] = {0, 0};
};

bool is_cast_to(const ir::Node* n, DType t) {
  return n->op == ir::OpKind::Cast && n->outputs[0]->type.dtype == t;
}

// The ops whose f32 result only half ops read (through casts to the half type) that give that
// result in half instead, f32 inside their kernels:
// - a Softmax (attention's probabilities, read by the MatMul with the values): half scores in,
//   half probabilities out. The probabilities were rounded for that MatMul anyway; what changes
//   is that the backward reads the rounded ones, and that attention's largest tensor moves in
//   half the bytes (and is saved for the backward in half);
// - a LayerNormalization (a transformer's normalized input to its half MatMuls): f32 x, half y
//   (y_dtype), the same bits as the cast; its gradient then takes the half dy.
struct HalfResults {
  int64_t softmaxes = 0, layer_norms = 0;
};

HalfResults give_half_results(ir::Graph& g, HalfValues& half_of, DType half) {
  // The candidates first: the loop removes their reading casts, which come later in g.nodes().
  std::vector<ir::Node*> candidates;
  for (ir::Node* n : g.nodes())
    if ((n->op == ir::OpKind::Softmax || n->op == ir::OpKind::LayerNormalization) &&
        n->inputs[0]->type.dtype == DType::F32 && n->outputs[0]->type.dtype == DType::F32)
      candidates.push_back(n);
  HalfResults count;
  for (ir::Node* n : candidates) {
    ir::Value* y = n->outputs[0];
    const std::vector<ir::Node*> readers = g.users(y);
    if (readers.empty() || g.is_pinned(y) ||
        !std::all_of(readers.begin(), readers.end(), [&](const ir::Node* r) { return is_cast_to(r, half); }))
      continue;
    g.set_insertion_point(n);
    const bool softmax = n->op == ir::OpKind::Softmax;
    std::vector<ir::Value*> inputs = n->inputs;
    Attrs attrs = n->attrs;
    if (softmax)
      inputs[0] = half_of.of(inputs[0]);
    else
      attrs.set("y_dtype", std::string(dtype_name(half)));
    ir::Node* rebuilt = rebuild_in_half(g, n, inputs, attrs);
    for (ir::Node* cast : readers) {
      g.replace_all_uses(cast->outputs[0], rebuilt->outputs[0]);
      g.remove_node(cast);
    }
    half_of.forget(y);
    g.remove_node(n);
    ++(softmax ? count.softmaxes : count.layer_norms);
  }
  return count;
}

// A BatchNormalization of a half op's result (a convolution's, through its widening Cast) runs in
// half, as autocast runs cuDNN's: half x and y, f32 scale, bias and statistics, f32 inside. Its
// f32 readers get y widened; the running statistics (state updates) keep their values. Returns
// whether `n` was such a batch norm (and is gone).
bool run_batch_norm_in_half(ir::Graph& g, ir::Node* n, HalfValues& half_of, DType half) {
  if (n->op != ir::OpKind::BatchNormalization || !widened_from(n->inputs[0], half) ||
      std::find(n->outputs.begin(), n->outputs.end(), nullptr) != n->outputs.end())
    return false;
  g.set_insertion_point(n);
  std::vector<ir::Value*> inputs = n->inputs;
  inputs[0] = half_of.of(inputs[0]);
  std::vector<std::string> names;
  for (const ir::Value* v : n->outputs) names.push_back(g.unique_value_name(v->name + ".half"));
  ir::Node* bn = g.add_node(ir::OpKind::BatchNormalization, inputs, n->attrs, names, n->name + ".half");
  ir::Value* y = n->outputs[0];
  ir::Value* wide = g.add_node(ir::OpKind::Cast, {bn->outputs[0]}, cast_to(DType::F32),
                               {g.unique_value_name(y->name + ".f32")}, n->name + ".to_f32")
                        ->outputs[0];
  std::vector<ir::Value*> statistics(n->outputs.begin(), n->outputs.end());
  statistics[0] = nullptr;
  take_over_values(bn, statistics);
  half_of.forget(y);
  g.replace_node(n, {wide});
  return true;
}

}  // namespace

DType parse_precision(const std::string& precision) {
  if (precision == "fp32") return DType::F32;
  if (precision == "bf16") return DType::BF16;
  if (precision == "fp16") return DType::F16;
  throw Error(fmt::format("--precision must be fp32, bf16 or fp16, got '{}'", precision));
}

bool MixedPrecision::run(ir::Graph& g) {
  if (half_ == DType::F32) return false;
  HalfValues half_of(g, half_);
  int64_t ops = 0, adds = 0, batch_norms = 0;
  // In schedule order, so a convolution reading a batch norm's (Relu's) result sees it in half.
  for (ir::Node* n : g.nodes()) {
    if (run_batch_norm_in_half(g, n, half_of, half_)) {
      ++batch_norms;
      continue;
    }
    const bool add = adds_half_values(*n, half_);
    if (!add && !runs_in_half(*n)) continue;
    g.set_insertion_point(n);
    std::vector<ir::Value*> inputs;
    for (ir::Value* v : n->inputs) inputs.push_back(v ? half_of.of(v) : nullptr);
    ir::Value* half_out = rebuild_in_half(g, n, inputs, n->attrs)->outputs[0];
    ir::Value* wide = g.add_node(ir::OpKind::Cast, {half_out}, cast_to(DType::F32),
                                 {g.unique_value_name(n->outputs[0]->name + ".f32")}, n->name + ".to_f32")
                          ->outputs[0];
    g.replace_node(n, {wide});
    ++(add ? adds : ops);
  }
  const HalfResults half_results = give_half_results(g, half_of, half_);
  g.clear_insertion_point();
  if (half_ == DType::F16) add_loss_scale(g, initial_loss_scale_);
  stats_["ops_in_half"] = ops;
  stats_["casts_to_half"] = half_of.casts();
  stats_["transposes_in_half"] = half_of.transposes();
  stats_["reshapes_in_half"] = half_of.reshapes();
  stats_["round_trips_skipped"] = half_of.round_trips();
  stats_["softmax_in_half"] = half_results.softmaxes;
  stats_["layer_norms_in_half"] = half_results.layer_norms;
  stats_["batch_norms_in_half"] = batch_norms;
  stats_["adds_in_half"] = adds;
  stats_["relus_in_half"] = half_of.relus();
  stats_["pools_in_half"] = half_of.pools();
  return ops > 0 || half_ == DType::F16;
}

}  // namespace dlc::passes
