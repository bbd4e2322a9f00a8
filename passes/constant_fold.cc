// Constant folding.
#include "passes/constant_fold.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::passes {

namespace {

// Random ops give a different value on every run, so folding them would freeze one sample.
bool is_random(ir::OpKind op) { return op == ir::OpKind::Dropout; }

bool all_inputs_constant(const ir::Node& n) {
  bool any = false;
  for (const ir::Value* in : n.inputs) {
    if (!in) continue;
    if (in->role != ir::Role::Constant || !in->data) return false;
    any = true;
  }
  return any;
}

int64_t output_elements(const ir::Node& n) {
  int64_t total = 0;
  for (const ir::Value* out : n.outputs)
    if (out) total += out->type.numel();
  return total;
}

}  // namespace

bool ConstantFolding::run(ir::Graph& graph) {
  int64_t folded = 0, created = 0, too_large = 0;
  for (ir::Node* n : graph.nodes()) {
    if (is_random(n->op) || !all_inputs_constant(*n)) continue;
    if (output_elements(*n) > max_elements_) {
      ++too_large;
      continue;
    }
    std::vector<const Tensor*> inputs;
    for (const ir::Value* in : n->inputs) inputs.push_back(in ? in->data.get() : nullptr);
    std::vector<Tensor> results;
    try {
      results = evaluator_.evaluate(*n, inputs);
    } catch (const Error& e) {
      throw Error(fmt::format("constant-fold: node '{}' ({}): {}", n->name, op_name(n->op), e.what()));
    }
    // Each output becomes a constant under a temporary name that takes the output's place.
    std::vector<ir::Value*> constants(n->outputs.size(), nullptr);
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      ir::Value* out = n->outputs[i];
      if (!out) continue;
      constants[i] =
          graph.add_constant(graph.unique_value_name(out->name + ".folded"), std::move(results.at(i)));
      ++created;
    }
    graph.replace_node(n, constants);
    ++folded;
  }
  stats_["nodes_folded"] = folded;
  stats_["constants_created"] = created;
  stats_["skipped_too_large"] = too_large;
  return folded > 0;
}

}  // namespace dlc::passes
