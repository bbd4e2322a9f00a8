// Common-subexpression elimination.
#include "passes/cse.h"

#include <algorithm>
#include <map>
#include <utility>

namespace dlc::passes {

namespace {

// Ops whose result is not a function of their inputs and attributes alone.
bool is_random(ir::OpKind op) { return op == ir::OpKind::Dropout; }

bool same_computation(const ir::Node& a, const ir::Node& b) {
  if (a.attrs != b.attrs || a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.outputs.size(); ++i)
    if ((a.outputs[i] == nullptr) != (b.outputs[i] == nullptr) ||
        (a.outputs[i] && a.outputs[i]->type != b.outputs[i]->type))
      return false;
  return true;
}

int merge_constants(ir::Graph& g) {
  int merged = 0;
  std::vector<ir::Value*> kept;
  for (ir::Value* c : g.initializers()) {
    if (c->role != ir::Role::Constant || g.is_output(c)) continue;
    auto same =
        std::find_if(kept.begin(), kept.end(), [&](const ir::Value* k) { return *k->data == *c->data; });
    if (same == kept.end()) {
      kept.push_back(c);
    } else if (!g.users(c).empty()) {
      g.replace_all_uses(c, *same);
      ++merged;
    }
  }
  return merged;
}

}  // namespace

bool CommonSubexpressionElimination::run(ir::Graph& g) {
  const int constants = merge_constants(g);
  // Candidates by (op, inputs); attributes and result types are compared within a bucket.
  std::map<std::pair<ir::OpKind, std::vector<ir::Value*>>, std::vector<ir::Node*>> seen;
  int nodes = 0;
  for (ir::Node* n : g.nodes()) {
    if (is_random(n->op)) continue;
    std::vector<ir::Node*>& bucket = seen[{n->op, n->inputs}];
    auto earlier = std::find_if(bucket.begin(), bucket.end(),
                                [&](const ir::Node* e) { return same_computation(*e, *n); });
    const bool keeps_name = std::any_of(n->outputs.begin(), n->outputs.end(),
                                        [&](const ir::Value* v) { return v && g.is_output(v); });
    if (earlier == bucket.end() || keeps_name) {
      bucket.push_back(n);
      continue;
    }
    for (size_t i = 0; i < n->outputs.size(); ++i)
      if (n->outputs[i]) g.replace_all_uses(n->outputs[i], (*earlier)->outputs[i]);
    g.remove_node(n);
    ++nodes;
  }
  stats_["nodes_merged"] = nodes;
  stats_["constants_merged"] = constants;
  return nodes + constants > 0;
}

}  // namespace dlc::passes
