// Common-subexpression elimination: a node computing the same op with the same attributes on the
// same inputs as an earlier node is replaced by it, and identical constants are merged. Random
// ops (Dropout) are never merged; nodes whose outputs are graph outputs keep their names.
// The replaced constants are left for DCE to remove.
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class CommonSubexpressionElimination final : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  std::string_view summary() const override { return "merge nodes that compute the same value"; }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
