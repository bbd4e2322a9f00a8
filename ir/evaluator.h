// Evaluating one node on constant inputs, as constant folding needs. The IR only declares the
// interface; codegen implements it with the CPU runtime's kernels, so passes stay IR-only.
#pragma once

#include <vector>

#include "dlc/tensor.h"
#include "ir/graph.h"

namespace dlc::ir {

class ConstantEvaluator {
 public:
  virtual ~ConstantEvaluator() = default;
  /// Computes the node's outputs from `inputs` (one per node input; absent inputs are empty
  /// tensors with a null producer). Output types are the node's output value types.
  virtual std::vector<Tensor> evaluate(const Node& node, const std::vector<const Tensor*>& inputs) = 0;
};

}  // namespace dlc::ir
