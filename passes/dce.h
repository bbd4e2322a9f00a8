// Dead-code elimination: removes nodes that reach no graph output and unused initializers.
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class DeadCodeElimination final : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  std::string_view summary() const override {
    return "remove nodes that reach no output and initializers nothing uses";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
