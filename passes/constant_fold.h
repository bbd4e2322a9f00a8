// Constant folding: evaluates nodes whose inputs are all constants (Role::Constant, never
// parameters, state or graph inputs) and replaces their outputs with constants of the same
// names. The evaluation itself is delegated to an ir::ConstantEvaluator (the CPU kernels in
// the tool), so this pass depends on the IR only. Folded-away constants are left for DCE.
#pragma once

#include <cstdint>

#include "ir/evaluator.h"
#include "passes/pass.h"

namespace dlc::passes {

class ConstantFolding final : public Pass {
 public:
  /// Nodes whose outputs hold more than `max_elements` elements in total are not folded, so a
  /// small constant expanded into a large one stays a node.
  explicit ConstantFolding(ir::ConstantEvaluator& evaluator, int64_t max_elements = int64_t(1) << 20)
      : evaluator_(evaluator), max_elements_(max_elements) {}

  std::string_view name() const override { return "constant-fold"; }
  std::string_view summary() const override {
    return "evaluate nodes whose inputs are all constants and replace them by constants";
  }
  /// Stats: nodes_folded, constants_created, skipped_too_large.
  bool run(ir::Graph& graph) override;

 private:
  ir::ConstantEvaluator& evaluator_;
  int64_t max_elements_;
};

}  // namespace dlc::passes
