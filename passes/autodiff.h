// Reverse-mode automatic differentiation: from the loss (the graph's first output) back to every
// trainable parameter, one gradient rule per op (grad_rules.h, passes/grad/). Gradients of values
// used more than once are summed; frozen or unreached parameters get none. The gradient of
// parameter P is the value named "P@grad" (role gradient).
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace dlc::passes {

/// Name of the gradient value of a parameter.
std::string gradient_name(const std::string& param);

/// Emits the nodes that compute the gradient of Σ(y · seed) with respect to each of `wrt` (seed
/// has y's type), through the nodes of `g` as they are now; returns one gradient per `wrt` entry,
/// null where y does not depend on it. New nodes go where `g`'s insertion point says. Throws
/// naming the node and its op where an op on the way has no gradient rule. `rules` (optional)
/// counts the rules applied.
std::vector<ir::Value*> backpropagate(ir::Graph& g, ir::Value* y, ir::Value* seed,
                                      const std::vector<ir::Value*>& wrt, int64_t* rules = nullptr);

class Autodiff final : public Pass {
 public:
  /// Parameters whose names match `freeze` (ECMAScript regex, empty: none) get no gradient.
  explicit Autodiff(std::string freeze = "") : freeze_(std::move(freeze)) {}
  std::string_view name() const override { return "autodiff"; }
  std::string_view summary() const override { return "generate the backward graph of the loss"; }
  bool run(ir::Graph& graph) override;

 private:
  std::string freeze_;
};

}  // namespace dlc::passes
