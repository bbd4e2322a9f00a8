// The operand layout of MultiTensorUpdate, the optimizer fusion's merged update (ir/ops/fused.def):
// one node for the updates of many parameters that share an optimizer kind, its attributes and
// its scalar operands. Its `update` attribute names the single-tensor op it stands for
// (SgdUpdate, AdamUpdate, RmspropUpdate); the other attributes are that op's. The operands are
// the single op's scalar operands once (lr; lr, step for Adam), then per tensor the single op's
// other operands in its order (param, grad, state…; an absent optional state is an absent
// operand); the results are per tensor the single op's results in its order.
//
// One op with the single op's name as an attribute (rather than one merged op per optimizer) keeps
// the shape inference, the CPU kernel, the in-place pairs and the CUDA binding written once, each
// in terms of the single op through this table. Shared by the IR (inference), the fusion pass,
// the CPU kernel, buffer sharing and the CUDA step binding.
#pragma once

#include <string_view>

namespace dlc {

struct MultiTensorLayout {
  std::string_view update;   // the single-tensor op
  int inputs = 0;            // its operands
  unsigned scalar_mask = 0;  // bit i: its operand i is a shared scalar
  int outputs = 0;           // its results

  bool is_scalar(int i) const { return (scalar_mask >> i) & 1u; }
  /// The single op's apply operand (its last).
  int apply_input() const { return inputs - 1; }
  int num_scalars() const {
    int s = 0;
    for (int i = 0; i < inputs; ++i) s += is_scalar(i);
    return s;
  }
  int tensor_inputs() const { return inputs - num_scalars(); }

  /// The merged node's operand that is operand `i` of tensor `k`'s single update.
  int merged_input(int k, int i) const {
    int scalars_before = 0;
    for (int j = 0; j < i; ++j) scalars_before += is_scalar(j);
    if (is_scalar(i)) return scalars_before;
    return num_scalars() + k * tensor_inputs() + (i - scalars_before);
  }
  /// The merged node's result that is result `j` of tensor `k`'s single update.
  int merged_output(int k, int j) const { return k * outputs + j; }

  /// The tensors of a merged node with these operand and result counts; -1 if they do not fit.
  int tensors(int merged_inputs, int merged_outputs) const {
    const int per = tensor_inputs();
    const int rest = merged_inputs - num_scalars();
    if (rest <= 0 || rest % per || merged_outputs != rest / per * outputs) return -1;
    return rest / per;
  }
};

/// The layout of merged `update` ops, or null when `update` is no single-tensor optimizer op.
inline const MultiTensorLayout* find_multi_tensor_layout(std::string_view update) {
  // SgdUpdate(param, grad, velocity, lr, apply?) -> param', velocity'
  // AdamUpdate(param, grad, m, v, lr, step, apply?) -> param', m', v'
  // RmspropUpdate(param, grad, square_avg, lr, grad_avg?, momentum_buffer?, apply?) -> param',
  //   square_avg', grad_avg'?, momentum_buffer'?
  // apply, a shared scalar, is the last operand (absent: a null operand of the merged node).
  static constexpr MultiTensorLayout kLayouts[] = {
      {"SgdUpdate", 5, (1u << 3) | (1u << 4), 2},
      {"AdamUpdate", 7, (1u << 4) | (1u << 5) | (1u << 6), 3},
      {"RmspropUpdate", 7, (1u << 3) | (1u << 6), 4},
  };
  for (const MultiTensorLayout& l : kLayouts)
    if (l.update == update) return &l;
  return nullptr;
}

}  // namespace dlc
