// Global-norm gradient clipping as graph ops, PyTorch's torch.nn.utils.clip_grad_norm_: the L2
// norm of each gradient, the L2 norm of those norms, coef = max_norm / (norm + 1e-6) clamped
// to at most 1, and every gradient multiplied by coef.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace dlc::passes {

/// Appends the clipping ops and returns the clipped gradients, in the order of `grads`.
std::vector<ir::Value*> clip_grad_norm(ir::Graph& graph, const std::vector<ir::Value*>& grads,
                                       double max_norm);

}  // namespace dlc::passes
