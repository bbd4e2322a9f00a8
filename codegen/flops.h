// Floating-point operation counts of IR nodes, for `dlc inspect --stats` (flops_per_step).
// Convention: a multiply-add is 2 operations (GEMM, convolution and their gradients); every
// other op counts one operation per output element.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace dlc::codegen {

int64_t node_flops(const ir::Node& node);

}  // namespace dlc::codegen
