// Expand gradients: replaces every Gradient node (ONNX's ai.onnx.preview.training Gradient, see
// ir/ops/grad.def) by the backward nodes autodiff emits for it, placed where the node was: the
// gradient of Σy with respect to each x, zeros where y does not depend on x. Its outputs keep
// their names.
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class ExpandGradients final : public Pass {
 public:
  std::string_view name() const override { return "expand-gradients"; }
  std::string_view summary() const override { return "replace Gradient nodes by their backward graphs"; }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
