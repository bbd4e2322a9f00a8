// Gradient accumulation in one static plan: each run is one micro-batch; the gradient of every
// parameter is added (scaled by 1/K, as PyTorch's loss/K) to an accumulation buffer kept as
// state, and the runtime bool input "apply" says whether this micro-step is the K-th, the one
// that updates. The optimizer updates take the gate (apply, and-ed with loss scaling's all-finite
// check) as their apply operand and leave their states as they are where it is false; other
// state (loss scaling's counters, the buffers) is gated with Where. Both are bit-exact: on the
// other micro-steps parameters and optimizer state keep their values, and the buffer restarts
// from zero after an applied step. With K = 1 everything passes through unchanged.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace dlc::passes {

class GradientAccumulator {
 public:
  /// Adds the "apply" input (named `apply_name`) when `micro_steps` > 1.
  GradientAccumulator(ir::Graph& graph, int64_t micro_steps, const char* apply_name);

  /// The gradient an update of `param` should use: `grad` itself, or the accumulated sum.
  ir::Value* accumulate(ir::Value* param, ir::Value* grad);
  /// The same for any f32 `value` of a micro-step: itself, or its sum (scaled by 1/K) over the
  /// micro-steps of this optimizer step, in a state buffer named after `name`.
  ir::Value* accumulate(const std::string& name, ir::Value* value);
  /// The bool scalar that says whether this run is an optimizer step that applies: "apply" and
  /// every skip_unless condition, and-ed; null when every run applies.
  ir::Value* update_gate() const { return update_gate_; }
  /// Registers `state` <- `new_value` after each run, where `new_value` is a result of an
  /// update op that takes update_gate() as its apply operand, so it is `state` itself on a run
  /// that does not apply (ir/ops/train.def).
  void update_state(ir::Value* new_value, ir::Value* state);
  /// From now on update_state also keeps the old values where the bool scalar `condition` is
  /// false (a skipped optimizer step: loss_scaling.h).
  void skip_unless(ir::Value* condition);
  /// Registers `state` <- `new_value` on every optimizer step, skipped or not: unchanged only
  /// where "apply" is false.
  void update_state_every_step(ir::Value* new_value, ir::Value* state);

 private:
  ir::Value* gated(ir::Value* condition, ir::Value* applied, ir::Value* kept);

  ir::Graph& graph_;
  int64_t micro_steps_;
  ir::Value* apply_ = nullptr;
  // apply_ and every skip_unless condition, and-ed.
  ir::Value* update_gate_ = nullptr;
  ir::Value* inverse_micro_steps_ = nullptr;  // f32 scalar 1/K
  ir::Value* zero_ = nullptr;                 // f32 scalar 0
};

}  // namespace dlc::passes
