// Canonicalization: local rewrites whose result is bit for bit the value they replace. A node is
// replaced by its operand for x*1, 1*x, x/1, x+(-0), (-0)+x, x-0 (integer zeros of either sign;
// x + (+0.0) is left alone since it turns -0.0 into +0.0), Identity, Cast to the same dtype,
// Reshape to the same shape, Transpose by the identity permutation, and Neg(Neg(x)). Chains
// collapse: Transpose(Transpose(x)) becomes one Transpose (none when they cancel) and
// Reshape(Reshape(x)) one Reshape. Nodes whose outputs are graph outputs or state updates keep
// them (the names are the signature); operands left unused are for DCE to remove.
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class Canonicalize final : public Pass {
 public:
  std::string_view name() const override { return "canonicalize"; }
  std::string_view summary() const override {
    return "fold exact identities: x*1, x-0, Identity, same-type Cast, Neg(Neg), Transpose/Reshape chains";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
