// Rematerialization (rematerialize.h): merging a fused producer into its one reader, and
// recomputing a fused producer's result where that reads fewer bytes than loading it.
#include "passes/rematerialize.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "dlc/expr_program.h"
#include "passes/fused_program.h"

namespace dlc::passes {

namespace {

bool is_fused_elementwise(const ir::Node* n) { return n && n->op == ir::OpKind::FusedElementwise; }

// The instructions of `p` that value `v` depends on (v included), marked in `need`.
void mark_needed(const ExprProgram& p, int v, std::vector<bool>& need) {
  if (need[size_t(v)]) return;
  need[size_t(v)] = true;
  for (int a : p.instrs[size_t(v)].args) mark_needed(p, a, need);
}

class Rematerializer {
 public:
  explicit Rematerializer(ir::Graph& g) : g_(g) {}

  RematerializeCounts run() {
    const std::vector<ir::Node*> nodes = g_.nodes();
    // A rewrite replaces the reader (at its place) and removes or replaces the producer, which
    // comes earlier: the nodes still ahead in `nodes` stay valid.
    for (ir::Node* b : nodes) {
      if (!is_fused_elementwise(b)) continue;
      while (ir::Node* rewritten = absorb_one_producer(b)) b = rewritten;
    }
    return counts_;
  }

 private:
  bool read_only_by(const ir::Node* a, const ir::Node* b) const {
    for (const ir::Value* v : a->outputs) {
      if (g_.is_pinned(v)) return false;
      for (const ir::Node* u : g_.users(v))
        if (u != b) return false;
    }
    return true;
  }

  // Rewrites `b` to compute one producer's results itself (rematerialize.h); returns the new
  // node, or null when no producer of b qualifies.
  ir::Node* absorb_one_producer(ir::Node* b) {
    for (ir::Value* v : b->inputs) {
      ir::Node* a = v ? v->producer : nullptr;
      if (!is_fused_elementwise(a) || a == b || a->outputs[0]->type.shape != b->outputs[0]->type.shape)
        continue;
      if (read_only_by(a, b)) {
        std::set<const ir::Value*> all(a->outputs.begin(), a->outputs.end());
        ++counts_.producers_merged;
        return inline_producer(b, a, all);
      }
      if (cheaper_to_recompute(b, a, v)) {
        ++counts_.values_recomputed;
        return inline_producer(b, a, {v});
      }
    }
    return nullptr;
  }

  bool cheaper_to_recompute(const ir::Node* b, const ir::Node* a, const ir::Value* v) const {
    const ExprProgram pa = program_of(*a);
    const int out = int(std::find(a->outputs.begin(), a->outputs.end(), v) - a->outputs.begin());
    std::vector<bool> need(pa.instrs.size(), false);
    mark_needed(pa, pa.outputs[size_t(out)].value, need);
    if (std::count(need.begin(), need.end(), true) > kMaxRecomputed) return false;
    std::set<const ir::Value*> leaves;
    for (size_t k = 0; k < pa.instrs.size(); ++k)
      if (need[k] && pa.instrs[k].op == ExprOp::Input) leaves.insert(a->inputs[size_t(pa.instrs[k].input)]);
    size_t loaded = 0;
    for (const ir::Value* leaf : leaves)
      if (std::find(b->inputs.begin(), b->inputs.end(), leaf) == b->inputs.end())
        loaded += leaf->type.bytes();
    return loaded < v->type.bytes();
  }

  // Replaces `b` by a node whose program computes the results of `a` in `inlined` from a's
  // operands; a then stores only what something else reads (and goes when nothing does).
  ir::Node* inline_producer(ir::Node* b, ir::Node* a, const std::set<const ir::Value*>& inlined) {
    const ExprProgram pa = program_of(*a), pb = program_of(*b);
    ExprProgram p(pb.dims);
    std::vector<ir::Value*> operands;
    std::map<const ir::Value*, int> loaded;
    const auto load = [&](ir::Value* v) {
      auto it = loaded.find(v);
      if (it != loaded.end()) return it->second;
      operands.push_back(v);
      return loaded[v] = p.input(v->name, v->type.dtype, v->type.shape);
    };
    // An instruction of `from` (reading `from_node`'s operands) copied into p, its operands first.
    std::map<int, int> from_a;
    const std::function<int(const ExprProgram&, const ir::Node*, std::map<int, int>&, int)> copy =
        [&](const ExprProgram& from, const ir::Node* from_node, std::map<int, int>& done, int k) -> int {
      auto it = done.find(k);
      if (it != done.end()) return it->second;
      const ExprInstr& in = from.instrs[size_t(k)];
      int r = 0;
      if (in.op == ExprOp::Input) {
        r = load(from_node->inputs[size_t(in.input)]);
      } else if (in.op == ExprOp::Constant) {
        r = p.constant(in.value);
      } else if (in.op == ExprOp::Cast) {
        r = p.cast(copy(from, from_node, done, in.args[0]), in.to);
      } else {
        std::vector<int> args;
        for (int x : in.args) args.push_back(copy(from, from_node, done, x));
        r = p.op(in.op, std::move(args));
      }
      return done[k] = r;
    };
    // The value b loads for a's result `v`: the instruction, rounded as it was stored.
    const auto recomputed = [&](const ir::Value* v) {
      const size_t o = size_t(std::find(a->outputs.begin(), a->outputs.end(), v) - a->outputs.begin());
      const ExprOutput& out = pa.outputs[o];
      const ExprInstr& last = pa.instrs[size_t(out.value)];
      const int r = copy(pa, a, from_a, out.value);
      const bool rounded = out.dtype == DType::F32 || (last.op == ExprOp::Cast && last.to == out.dtype);
      return rounded ? r : p.cast(r, out.dtype);
    };
    std::map<int, int> from_b;
    for (size_t k = 0; k < pb.instrs.size(); ++k) {
      const ExprInstr& in = pb.instrs[k];
      if (in.op == ExprOp::Input && inlined.count(b->inputs[size_t(in.input)]))
        from_b[int(k)] = recomputed(b->inputs[size_t(in.input)]);
    }
    for (const ExprOutput& out : pb.outputs) p.output(out.name, copy(pb, b, from_b, out.value), out.dtype);
    p.validate();

    ir::Node* rebuilt =
        replace_fused_node(g_, b, operands, p, std::vector<ir::Value*>(b->outputs.begin(), b->outputs.end()));
    drop_unread_results(a);
    return rebuilt;
  }

  // Keeps only the results of `a` that something reads; removes a when none is.
  void drop_unread_results(ir::Node* a) {
    std::vector<ir::Value*> read;
    std::vector<ExprOutput> outputs;
    const ExprProgram pa = program_of(*a);
    for (size_t o = 0; o < a->outputs.size(); ++o)
      if (g_.is_pinned(a->outputs[o]) || !g_.users(a->outputs[o]).empty()) {
        read.push_back(a->outputs[o]);
        outputs.push_back(pa.outputs[o]);
      }
    if (read.size() == a->outputs.size()) return;
    if (read.empty()) {
      g_.remove_node(a);
      return;
    }
    ExprProgram p = pa;
    p.outputs = std::move(outputs);
    replace_fused_node(g_, a, std::vector<ir::Value*>(a->inputs.begin(), a->inputs.end()), p, read);
  }

  ir::Graph& g_;
  RematerializeCounts counts_;
};

}  // namespace

RematerializeCounts rematerialize(ir::Graph& g) { return Rematerializer(g).run(); }

}  // namespace dlc::passes
