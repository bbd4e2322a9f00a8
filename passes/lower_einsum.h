// Lower Einsum: rewrites each floating-point Einsum into ops that have gradient rules, CUDA
// kernels and fast CPU kernels, so a model with Einsum trains, runs on CUDA, and multiplies
// through the GEMM kernels instead of the Einsum kernel's direct loop. A size-1 dim broadcast
// against a larger size of its letter becomes a letter of its own; a letter repeated within a
// term (a diagonal) is a Mul by an identity mask and a ReduceSum. Per operand, the letters no
// other term and not the output use are then summed (ReduceSum); the operands are contracted from
// the left, each contraction one MatMul between Transposes and Reshapes: the letters in both
// operands still needed later (by the output or a later operand) are batch dims, the other shared
// letters the contracted K, each operand's own letters M and N. A last Transpose puts the
// output's letters in order. The result keeps the Einsum's output name. Integer Einsums stay as
// they are (the CPU Einsum kernel runs them; no gradient, no CUDA kernel).
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class LowerEinsum final : public Pass {
 public:
  std::string_view name() const override { return "lower-einsum"; }
  std::string_view summary() const override {
    return "rewrite Einsum as ReduceSum, Transpose, Reshape and batched MatMul";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
