// Channels-last layout (channels_last.h): layout nodes rebuilt on channels-last operands, then
// the Transposes between them cancelled or moved past elementwise ops.
#include "passes/channels_last.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "dlc/channels_last.h"
#include "dlc/expr_program.h"
#include "passes/pass_switch.h"
#include "passes/value_takeover.h"

namespace dlc::passes {

namespace {

bool is_transpose_by(const ir::Node* n, const Shape& perm) {
  return n && n->op == ir::OpKind::Transpose && n->attrs.ints("perm", {}) == perm;
}

// The Transpose back to channels-first that produced `v`, or null.
const ir::Node* channels_first_transpose(const ir::Value* v) {
  return v && has_channel_layout(v->type.shape.size()) &&
                 is_transpose_by(v->producer, to_channels_first_perm(v->type.shape.size()))
             ? v->producer
             : nullptr;
}

bool is_scalar(const ir::Value* v) { return v->type.numel() == 1; }

// An elementwise op (one of expression programs', dlc/expr_program.h).
bool is_elementwise(const ir::Node& n) { return expr_op_from_name(ir::op_name(n.op)).has_value(); }

// An op whose axis attributes can be moved to channels-last places: a reduction, Pad or Slice.
bool takes_moved_axes(const ir::Node& n) {
  return ir::op_name(n.op).rfind("Reduce", 0) == 0 || n.op == ir::OpKind::Pad || n.op == ir::OpKind::Slice;
}

class Rewriter {
 public:
  explicit Rewriter(ir::Graph& g) : g_(g) {}

  // A layout node not yet channels-last whose first operand has rank 3 or more (not a MaxPool
  // with indices: they stay channels-first, no form for them).
  bool convertible(const ir::Node& n) const {
    if (!takes_channels_last(ir::op_name(n.op)) || is_channels_last(n.attrs)) return false;
    if (n.op == ir::OpKind::MaxPool && n.outputs.size() > 1 && n.outputs[1]) return false;
    const ir::Value* x = n.inputs.empty() ? nullptr : n.inputs[0];
    return x && has_channel_layout(x->type.shape.size());
  }

  // `n` rebuilt on channels-last operands; its results, transposed back, keep their values.
  void convert(ir::Node* n) {
    std::vector<ir::Value*> operands;
    for (ir::Value* v : n->inputs)
      operands.push_back(v && has_channel_layout(v->type.shape.size()) ? to_last(v, n) : v);
    Attrs attrs = n->attrs;
    attrs.set("channels_last", int64_t(1));
    ir::Node* last = rebuild(n, operands, attrs);
    std::vector<ir::Value*> kept(n->outputs.size(), nullptr);
    for (size_t k = 0; k < n->outputs.size(); ++k) {
      ir::Value* old = n->outputs[k];
      if (!old) continue;
      if (!has_channel_layout(old->type.shape.size())) {
        kept[k] = old;  // rank 1: the same value
        continue;
      }
      back_to_first(last->outputs[k], n, old);
    }
    finish(n, last, kept);
    ++converted;
  }

  // An elementwise op of rank 3 or more (a widening Cast only where its readers follow) whose
  // full-size operands include Transposes back to channels-first at least as many as those with no
  // channels-last form yet (those get a Transpose to channels-last; scalars stay as they are).
  bool movable(const ir::Node& n) const {
    if (!is_elementwise(n) || n.outputs.size() != 1 || !n.outputs[0]) return false;
    const TensorType& out = n.outputs[0]->type;
    if (!has_channel_layout(out.shape.size())) return false;
    if (n.op == ir::OpKind::Cast && widens(n) && !readers_follow(n.outputs[0])) return false;
    int transposed = 0, untransposed = 0;
    for (const ir::Value* v : n.inputs) {
      if (!v || is_scalar(v)) continue;
      if (v->type.shape != out.shape) return false;  // broadcast: left as it is
      if (channels_first_transpose(v))
        ++transposed;
      else if (!to_last_.count(v))
        ++untransposed;
    }
    return transposed > 0 && transposed >= untransposed;
  }

  static bool widens(const ir::Node& cast) {
    return dtype_size(cast.outputs[0]->type.dtype) > dtype_size(cast.inputs[0]->type.dtype);
  }

  // Whether every reader of `v` may take it channels-last (a layout node, an elementwise op, a
  // reduction, Pad or Slice), so that a widening Cast moved ahead of them gets its Transpose back
  // cancelled downstream rather than transposing twice the bytes (a weight gradient's Cast before
  // its optimizer update stays after the Transpose, in half).
  bool readers_follow(const ir::Value* v) const {
    if (g_.is_pinned(v)) return false;
    for (const ir::Node* r : g_.users(v))
      if (!takes_channels_last(ir::op_name(r->op)) && !is_elementwise(*r) && !takes_moved_axes(*r))
        return false;
    return true;
  }

  // `n` on its operands in channels-last order, its result transposed back.
  void move(ir::Node* n) {
    std::vector<ir::Value*> operands;
    for (ir::Value* v : n->inputs) operands.push_back(v && !is_scalar(v) ? to_last(v, n) : v);
    ir::Node* moved_node = rebuild(n, operands, n->attrs);
    back_to_first(moved_node->outputs[0], n, n->outputs[0]);
    finish(n, moved_node, {nullptr});
    ++moved;
  }

  // A reduction (Reduce* {axes, keepdims}), Pad {pads} or Slice {axes, …} of a Transpose back to
  // channels-first: its attributes for the Transpose's source (the axes in their channels-last
  // places), or nothing when the op is none of these or, a reduction without keepdims, would keep
  // its other dims in another order.
  std::optional<Attrs> channels_last_attrs(const ir::Node& n) const {
    if (!takes_moved_axes(n) || n.inputs.size() != 1 || n.outputs.size() != 1 ||
        !channels_first_transpose(n.inputs[0]))
      return std::nullopt;
    const bool reduction = n.op != ir::OpKind::Pad && n.op != ir::OpKind::Slice;
    const size_t rank = n.inputs[0]->type.shape.size();
    const Shape last = to_channels_last_perm(rank);    // channels-last dim j is channels-first dim last[j]
    const Shape place = to_channels_first_perm(rank);  // channels-first dim a is channels-last dim place[a]
    Attrs attrs = n.attrs;
    if (n.op == ir::OpKind::Pad) {
      const Shape& pads = n.attrs.ints("pads");
      Shape moved(pads.size());
      for (size_t j = 0; j < rank; ++j) {
        moved[j] = pads[size_t(last[j])];
        moved[rank + j] = pads[rank + size_t(last[j])];
      }
      attrs.set("pads", moved);
      return attrs;
    }
    Shape axes = n.attrs.ints("axes", {});
    if (reduction && axes.empty()) return attrs;  // all of them
    Shape kept;
    for (int64_t a : last)
      if (std::find(axes.begin(), axes.end(), a) == axes.end()) kept.push_back(a);
    for (int64_t& a : axes) a = place[size_t(a)];
    if (reduction) {
      if (n.attrs.i("keepdims", 1) == 0 && !std::is_sorted(kept.begin(), kept.end())) return std::nullopt;
      std::sort(axes.begin(), axes.end());
    }
    attrs.set("axes", axes);
    return attrs;
  }

  // `n` on the Transpose's source with `attrs`; a result of rank 3 or more is channels-last, and
  // transposed back.
  void move_with_attrs(ir::Node* n, const Attrs& attrs) {
    ir::Node* moved_node = rebuild(n, {channels_first_transpose(n->inputs[0])->inputs[0]}, attrs);
    ir::Value* result = n->outputs[0];
    const bool kept_rank = result->type.shape.size() == n->inputs[0]->type.shape.size();
    if (kept_rank) {
      back_to_first(moved_node->outputs[0], n, result);
      finish(n, moved_node, {nullptr});
    } else {
      finish(n, moved_node, {result});
    }
    ++moved;
  }

  // Removes what nothing reads any more (the Transposes back that every reader moved past, and
  // mixed precision's unread casts to f32 that read them); returns how many added Transposes stay.
  int64_t remove_unread() {
    g_.remove_dead_nodes();
    int64_t left = 0;
    for (const ir::Node* n : g_.nodes()) left += added_.count(n);
    return left;
  }

  int64_t converted = 0, moved = 0;

 private:
  // `v` in channels-last order: the source of a Transpose back, else a Transpose before `at`
  // (one per value).
  ir::Value* to_last(ir::Value* v, const ir::Node* at) {
    if (const ir::Node* back = channels_first_transpose(v)) return back->inputs[0];
    if (auto it = to_last_.find(v); it != to_last_.end()) return it->second;
    return to_last_[v] =
               transpose_before(at, v, to_channels_last_perm(v->type.shape.size()), v->name + ".nhwc")
                   ->outputs[0];
  }

  // A Transpose back to channels-first of `v` before `at`, taking over `old` (its name, its uses).
  void back_to_first(ir::Value* v, const ir::Node* at, ir::Value* old) {
    take_over_values(
        transpose_before(at, v, to_channels_first_perm(v->type.shape.size()), old->name + ".nchw"), {old});
  }

  // A Transpose of `v` by `perm` added before `at`, its result named after `name`.
  ir::Node* transpose_before(const ir::Node* at, ir::Value* v, const Shape& perm, const std::string& name) {
    g_.set_insertion_point(at);
    Attrs attrs;
    attrs.set("perm", perm);
    ir::Node* t = g_.add_node(ir::OpKind::Transpose, {v}, attrs, {g_.unique_value_name(name)});
    g_.clear_insertion_point();
    added_.insert(t);
    return t;
  }

  // A node of n's op before it, on `operands` with `attrs`, its results named after n's (".nhwc").
  ir::Node* rebuild(const ir::Node* n, const std::vector<ir::Value*>& operands, const Attrs& attrs) {
    std::vector<std::string> names;
    for (const ir::Value* v : n->outputs) names.push_back(v ? g_.unique_value_name(v->name + ".nhwc") : "");
    g_.set_insertion_point(n);
    ir::Node* node = g_.add_node(n->op, operands, attrs, names, g_.unique_node_name(n->name + ".nhwc"));
    g_.clear_insertion_point();
    return node;
  }

  // `node` takes over n's values in `kept` and n's name; n goes.
  void finish(ir::Node* n, ir::Node* node, const std::vector<ir::Value*>& kept) {
    take_over_values(node, kept);
    const std::string name = n->name;
    g_.remove_node(n);
    g_.rename_node(node, name);
  }

  ir::Graph& g_;
  std::map<const ir::Value*, ir::Value*> to_last_;
  std::set<const ir::Node*> added_;  // every Transpose added
};

}  // namespace

bool wants_channels_last(const std::string& layout, const std::string& device, const std::string& precision) {
  return switched_on("--layout", layout, "nhwc", "nchw", device, precision);
}

bool ChannelsLast::run(ir::Graph& g) {
  Rewriter r(g);
  for (ir::Node* n : g.nodes()) {
    if (r.convertible(*n))
      r.convert(n);
    else if (r.movable(*n))
      r.move(n);
    else if (const std::optional<Attrs> attrs = r.channels_last_attrs(*n))
      r.move_with_attrs(n, *attrs);
  }
  stats_["transposes"] = r.remove_unread();
  stats_["layout_nodes"] = r.converted;
  stats_["ops_moved"] = r.moved;
  return r.converted > 0;
}

}  // namespace dlc::passes
