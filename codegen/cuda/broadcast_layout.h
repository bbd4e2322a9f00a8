// Index arithmetic of broadcasting elementwise kernels: the output's dims with size-1 dims dropped
// and adjacent dims merged wherever every operand allows, each operand's element strides over
// those dims (0 along broadcast dims), and how each operand is read (contiguously like the
// output, as one scalar, or through its strides).
#pragma once

#include <cstdint>
#include <vector>

#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

enum class Access : uint8_t {
  Full,     // same elements as the output: offset == output index
  Scalar,   // one element for every output element
  Strided,  // offset = sum over dims of coordinate * stride
};

struct BroadcastLayout {
  Shape dims;                                 // collapsed output dims (at least one)
  std::vector<std::vector<int64_t>> strides;  // per operand, per collapsed dim
  std::vector<Access> access;                 // per operand
};

/// The layout of `operands` (each broadcastable to `out`, numpy rules) read along `out`.
/// Throws dlc::Error when an operand does not broadcast.
BroadcastLayout broadcast_layout(const Shape& out, const std::vector<Shape>& operands);

}  // namespace dlc::codegen::cuda
