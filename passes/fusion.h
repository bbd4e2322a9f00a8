// First, epilogue fusion folds Transposes and bias / scale / residual / Relu epilogues into
// MatMul, residuals and Relus into convolutions, a Relu and its gradient into batch normalization
// (epilogue_fusion.h; stats matmul_*, conv_*, norm_*), before elementwise grouping could take
// those elementwise ops. Then elementwise fusion:
// chains of elementwise ops (forward and backward: Add, Mul, Relu, ReluGrad,
// Sigmoid, Where, Cast, … — the ops of DLC_EXPR_OPS) become one FusedElementwise node whose
// `program` attribute is the chain as an expression program (dlc/expr_program.h), so the CPU
// runtime runs them as one pass over the elements.
//
// Grouping is greedy over the schedule: a fusable node joins the group of one of its operands'
// producers when it has the group's shape, and starts a group of its own otherwise. Legality:
//   - every op of a group has the group's result shape (operands from outside may broadcast);
//   - operand and result dtypes are f32/f16/bf16 (bool only as Where's condition or around a
//     Cast); random ops (Dropout) and everything outside DLC_EXPR_OPS stay as they are;
//   - a group value used outside the group, or a graph output or state update, is emitted as an
//     output of the fused node (keeping its name), and all such outside users come after the
//     group's last node, where the fused node is placed (so the schedule stays valid);
//   - a 16-bit intermediate is rounded to its dtype inside the program, exactly as the unfused
//     kernels store it, so a fused graph computes the bits of the unfused one.
// Groups of one node are left alone, unless a reduction then absorbs them. A group reading the
// result of a widening Cast (f16/bf16 to f32) made outside it reads the 16-bit operand and casts
// it itself (exact; stat casts_recast): the result is then stored only for users that are not in
// a fused group, and a widening Cast left with no user goes (stat casts_removed). Mixed precision's
// backward is full of these: the gradient of a half MatMul's result, cast to f32, feeds both a
// reduction and an elementwise op in softmax's and layer norm's gradients.
//
// Then rematerialization (rematerialize.h; stats producers_merged, values_recomputed): a fused
// kernel that reads another's result of its shape computes it itself — the whole producer when
// nothing else reads it, one result when what it is made of has fewer bytes (a backward kernel
// recomputing GELU's f32 intermediates from the half MatMul result and the bias).
//
// Then a ReduceSum / ReduceMean of a fused program's f32 result joins the program as one
// FusedReduce node, which also stores the program's results used elsewhere (reduce_fusion.h;
// stat reductions_fused).
//
// Then a Cast to f16/bf16 of a fused node's stored f32 result becomes one more output of that node
// (cast_outputs.h; stat cast_outputs), and the f32 result goes when only the Cast read it.
//
// The pass also merges the optimizer's per-parameter updates into MultiTensorUpdate nodes
// (optimizer_fusion.h; stat optimizer_updates_merged).
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

class Fusion final : public Pass {
 public:
  std::string_view name() const override { return "fusion"; }
  std::string_view summary() const override {
    return "fuse chains of elementwise ops into FusedElementwise nodes";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
