// Which operand's bytes a result may take over because the kernels of both backends update it in
// place: an optimizer update's parameter and states (SgdUpdate, AdamUpdate, RmspropUpdate, and
// their merged MultiTensorUpdate), and a training-mode BatchNormalization's running statistics.
// One table for buffer sharing (codegen/buffer_aliases.cc: the memory planner puts the result in
// the operand's buffer) and the CUDA step binding (codegen/cuda/step_binding.cc: the result is
// first a copy of the operand, then the kernel or cuDNN updates it).
#pragma once

#include <string_view>

#include "dlc/attributes.h"

namespace dlc {

/// The operand of `op` (an op name as in plans and the IR) whose bytes result `output` updates
/// in place, or -1 when it has none:
///   SgdUpdate(p, grad, velocity, lr, apply?) -> p', velocity'                0->0, 1->2
///   AdamUpdate(p, grad, m, v, lr, step, apply?) -> p', m', v'                0->0, 1->2, 2->3
///   RmspropUpdate(p, grad, sq, lr, grad_avg, buf, apply?) -> p', sq', …      0->0, 1->2, 2->4, 3->5
///   BatchNormalization(x, scale, bias, mean, var) -> y, mean', var'         1->3, 2->4 in training mode
///   MultiTensorUpdate: each tensor's pairs of its single update, at the merged positions.
int in_place_operand(std::string_view op, const Attrs& attrs, int output);

}  // namespace dlc
