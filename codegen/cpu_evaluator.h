// The ConstantEvaluator that constant folding uses: runs one node with the CPU kernels.
#pragma once

#include "ir/evaluator.h"

namespace dlc::codegen {

class CpuEvaluator final : public ir::ConstantEvaluator {
 public:
  std::vector<Tensor> evaluate(const ir::Node& node, const std::vector<const Tensor*>& inputs) override;
};

}  // namespace dlc::codegen
