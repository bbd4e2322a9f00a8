// Elementwise fusion (fusion.h): grouping, the legality checks and the rewrite into
// FusedElementwise nodes.
#include "passes/fusion.h"

#include <algorithm>
#include <limits>
#include <map>

#include "dlc/expr_program.h"
#include "passes/cast_outputs.h"
#include "passes/epilogue_fusion.h"
#include "passes/optimizer_fusion.h"
#include "passes/reduce_fusion.h"
#include "passes/rematerialize.h"
#include "passes/value_takeover.h"

namespace dlc::passes {

namespace {

bool is_float_storage(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// The program op of `n` when the node may join a group: one result, operand and result dtypes
// the programs store, every required operand present.
std::optional<ExprOp> fusable_op(const ir::Node& n) {
  const std::optional<ExprOp> op = expr_op_from_name(ir::op_name(n.op));
  if (!op || n.outputs.size() != 1 || !n.outputs[0]) return std::nullopt;
  const DType out = n.outputs[0]->type.dtype;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const ir::Value* v = n.inputs[i];
    if (!v) {
      if (*op != ExprOp::Clip) return std::nullopt;  // Clip's bounds are optional
      continue;
    }
    const DType t = v->type.dtype;
    const bool ok = *op == ExprOp::Cast    ? is_expr_storage(t)
                    : *op == ExprOp::Where ? (i == 0 ? t == DType::Bool : is_float_storage(t))
                                           : is_float_storage(t);
    if (!ok) return std::nullopt;
  }
  if (*op == ExprOp::Cast ? !is_expr_storage(out) : !is_float_storage(out)) return std::nullopt;
  return op;
}

struct Group {
  std::vector<ir::Node*> nodes;  // in schedule order
  Shape dims;
};

// A Cast from f16/bf16 to f32: exact, so a group may redo it from the 16-bit operand.
bool is_widening_cast(const ir::Node* n) {
  return n && n->op == ir::OpKind::Cast && n->inputs.size() == 1 && n->inputs[0] && n->outputs.size() == 1 &&
         is_half(n->inputs[0]->type.dtype) && n->outputs[0]->type.dtype == DType::F32;
}

class Fuser {
 public:
  explicit Fuser(ir::Graph& g) : g_(g), nodes_(g.nodes()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      pos_[nodes_[i]] = int(i);
      for (ir::Value* v : nodes_[i]->inputs)
        if (v) users_[v].push_back(nodes_[i]);
    }
  }

  void group() {
    for (ir::Node* n : nodes_) {
      if (!fusable_op(*n)) continue;
      const Shape& dims = n->outputs[0]->type.shape;
      int chosen = -1;
      for (ir::Value* v : n->inputs) {
        if (!v || !v->producer || !group_of_.count(v->producer)) continue;
        const int gi = group_of_[v->producer];
        if (groups_[size_t(gi)].dims == dims && can_join(groups_[size_t(gi)], n)) {
          chosen = gi;
          break;
        }
      }
      if (chosen < 0) {
        chosen = int(groups_.size());
        groups_.push_back({{}, dims});
      }
      groups_[size_t(chosen)].nodes.push_back(n);
      group_of_[n] = chosen;
    }
  }

  // Rewrites every group of two or more nodes; returns {groups, nodes} fused.
  std::pair<int64_t, int64_t> rewrite() {
    for (const Group& gr : groups_) fused_.push_back(will_fuse(gr));
    recast_widening_casts();
    int64_t groups = 0, nodes = 0;
    for (size_t i = 0; i < groups_.size(); ++i) {
      if (!fused_[i] || !fuse(groups_[i])) continue;
      ++groups;
      nodes += int64_t(groups_[i].nodes.size());
    }
    return {groups, nodes};
  }

  // Widening casts whose every reader got its own copy (recasts()) and that nothing else needs:
  // removed.
  int64_t remove_recast_casts() {
    int64_t removed = 0;
    for (ir::Node* n : g_.nodes())
      if (is_widening_cast(n) && !g_.is_pinned(n->outputs[0]) && g_.users(n->outputs[0]).empty()) {
        g_.remove_node(n);
        ++removed;
      }
    return removed;
  }

  int64_t recasts() const { return recasts_; }

 private:
  bool in_group(const Group& gr, const ir::Node* n) const {
    auto it = group_of_.find(n);
    return it != group_of_.end() && &groups_[size_t(it->second)] == &gr;
  }

  // Whether `n` may join `gr`: every use of a group value outside the group (other than by `n`)
  // comes after `n`, where the fused node would then be placed.
  bool can_join(const Group& gr, const ir::Node* n) const {
    for (const ir::Node* m : gr.nodes)
      for (const ir::Value* v : m->outputs) {
        auto it = users_.find(v);
        if (it == users_.end()) continue;
        for (const ir::Node* u : it->second)
          if (u != n && !in_group(gr, u) && pos_.at(u) < pos_.at(n)) return false;
      }
    return true;
  }

  // A lone op is left alone unless the reduction of its result then absorbs it.
  bool will_fuse(const Group& gr) const {
    return gr.nodes.size() >= 2 || fusable_reduction(g_, gr.nodes[0]->outputs[0]);
  }

  // Whether a group may read `v` by casting its 16-bit operand: `v` is a widening cast's result
  // whose operand a fused group does not make (such a group stores only what its users read).
  bool recastable(const ir::Value* v) const {
    if (!is_widening_cast(v->producer)) return false;
    const ir::Node* half_producer = v->producer->inputs[0]->producer;
    auto it = half_producer ? group_of_.find(half_producer) : group_of_.end();
    return it == group_of_.end() || !fused_[size_t(it->second)];
  }

  bool used_outside(const Group& gr, const ir::Value* v) const {
    if (g_.is_pinned(v)) return true;
    auto it = users_.find(v);
    if (it == users_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const ir::Node* u) { return !in_group(gr, u); });
  }

  // Each group to be fused that reads a recastable widening cast's result from outside gets its
  // own Cast of the 16-bit operand, just before its first reader, so the result need not be stored
  // for it.
  void recast_widening_casts() {
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      if (!fused_[gi]) continue;
      Group& gr = groups_[gi];
      std::vector<ir::Node*> nodes;
      std::map<ir::Value*, ir::Value*> copy_of;
      for (ir::Node* n : gr.nodes) {
        for (ir::Value*& in : n->inputs) {
          if (!in || (in->producer && in_group(gr, in->producer)) || !recastable(in)) continue;
          auto it = copy_of.find(in);
          if (it == copy_of.end()) {
            const ir::Node* cast = in->producer;
            g_.set_insertion_point(n);
            ir::Node* copy = g_.add_node(ir::OpKind::Cast, {cast->inputs[0]}, cast->attrs,
                                         {g_.unique_value_name(in->name + ".recast")},
                                         g_.unique_node_name(cast->name + ".recast"));
            g_.clear_insertion_point();
            nodes.push_back(copy);
            group_of_[copy] = int(gi);
            it = copy_of.emplace(in, copy->outputs[0]).first;
            ++recasts_;
          }
          std::vector<ir::Node*>& readers = users_[in];
          readers.erase(std::remove(readers.begin(), readers.end(), n), readers.end());
          users_[it->second].push_back(n);
          in = it->second;
        }
        nodes.push_back(n);
      }
      gr.nodes = std::move(nodes);
    }
  }

  bool fuse(const Group& gr) {
    ExprProgram p(gr.dims);
    std::vector<ir::Value*> operands;
    std::map<const ir::Value*, int> value_of;  // IR value -> program value
    const auto operand = [&](ir::Value* v) {
      auto it = value_of.find(v);
      if (it != value_of.end()) return it->second;
      operands.push_back(v);
      return value_of[v] = p.input(v->name, v->type.dtype, v->type.shape);
    };
    std::vector<ir::Value*> emitted;
    for (ir::Node* n : gr.nodes) {
      const ExprOp op = *fusable_op(*n);
      // An absent Clip bound is the unfused kernel's f32 limit.
      const auto clip_limit = [&](size_t i) {
        return p.constant(i == 1 ? std::numeric_limits<float>::lowest() : std::numeric_limits<float>::max());
      };
      std::vector<int> args;
      for (size_t i = 0; i < n->inputs.size(); ++i)
        args.push_back(n->inputs[i] ? operand(n->inputs[i]) : clip_limit(i));
      if (op == ExprOp::Clip)
        while (args.size() < 3) args.push_back(clip_limit(args.size()));
      ir::Value* out = n->outputs[0];
      const DType t = out->type.dtype;
      int v = op == ExprOp::Cast ? p.cast(args[0], t) : p.op(op, std::move(args));
      if (op != ExprOp::Cast && t != DType::F32) v = p.cast(v, t);  // stored as the unfused kernel would
      value_of[out] = v;
      if (used_outside(gr, out)) {
        p.output(out->name, v, t);
        emitted.push_back(out);
      }
    }
    if (emitted.empty()) return false;
    p = p.deduplicated();
    p.validate();

    std::vector<std::string> temp_names;
    std::vector<TensorType> types;
    for (ir::Value* v : emitted) {
      temp_names.push_back(g_.unique_value_name(v->name + ".unfused"));
      types.push_back(v->type);
    }
    ir::Node* last = gr.nodes.back();
    Attrs attrs;
    attrs.set("program", p.body());
    g_.set_insertion_point(last);
    ir::Node* fused = g_.add_node_typed(ir::OpKind::FusedElementwise, operands, std::move(attrs), temp_names,
                                        types, "fused." + last->name);
    g_.clear_insertion_point();
    // The fused node takes over the emitted values (names, roles and every reference to them
    // stay); the old nodes get the placeholders and go.
    take_over_values(fused, emitted);
    for (auto it = gr.nodes.rbegin(); it != gr.nodes.rend(); ++it) g_.remove_node(*it);
    return true;
  }

  ir::Graph& g_;
  std::vector<ir::Node*> nodes_;
  std::map<const ir::Node*, int> pos_;
  std::map<const ir::Value*, std::vector<ir::Node*>> users_;
  std::map<const ir::Node*, int> group_of_;
  std::vector<Group> groups_;
  std::vector<bool> fused_;  // per group: will be rewritten
  int64_t recasts_ = 0;
};

}  // namespace

bool Fusion::run(ir::Graph& g) {
  const EpilogueFusionCounts epi = fuse_epilogues(g);  // before grouping: epilogues leave the chains
  Fuser fuser(g);
  fuser.group();
  const auto [groups, nodes] = fuser.rewrite();
  const int64_t casts_removed = fuser.remove_recast_casts();
  const RematerializeCounts remat = rematerialize(g);
  const int64_t reductions = fuse_reductions(g);
  const int64_t cast_outputs = fold_casts_into_fused_outputs(g);
  const int64_t updates_merged = fuse_optimizer_updates(g);
  const int64_t gradient_casts = fold_gradient_casts(g);
  stats_ = {{"casts_recast", fuser.recasts()},
            {"casts_removed", casts_removed},
            {"groups", groups},
            {"nodes_fused", nodes},
            {"producers_merged", remat.producers_merged},
            {"values_recomputed", remat.values_recomputed},
            {"reductions_fused", reductions},
            {"cast_outputs", cast_outputs},
            {"optimizer_updates_merged", updates_merged},
            {"gradient_casts_folded", gradient_casts}};
  stats_["matmul_operand_transposes"] = epi.operand_transposes;
  stats_["matmul_result_transposes"] = epi.result_transposes;
  stats_["matmul_scales"] = epi.scales;
  stats_["matmul_half_scales"] = epi.half_scales;
  stats_["matmul_half_biases"] = epi.half_biases;
  stats_["matmul_operand_scales"] = epi.operand_scales + epi.half_operand_scales;
  stats_["matmul_biases"] = epi.biases;
  stats_["matmul_residuals"] = epi.residuals;
  stats_["matmul_activations"] = epi.activations;
  stats_["conv_activations"] = epi.conv_activations;
  stats_["conv_residuals"] = epi.conv_residuals;
  stats_["norm_activations"] = epi.norm_activations;
  stats_["norm_relu_grads"] = epi.norm_relu_grads;
  stats_["dead_nodes_removed"] = epi.dead_nodes;
  return groups > 0 || reductions > 0 || remat.producers_merged > 0 || remat.values_recomputed > 0 ||
         cast_outputs > 0 || updates_merged > 0 || gradient_casts > 0 || epi.total() > 0 ||
         epi.dead_nodes > 0;
}

}  // namespace dlc::passes
