// Index arithmetic of broadcasting elementwise kernels: the output's dims with size-1 dims dropped
// and adjacent dims merged wherever every operand allows, each operand's element strides over
// those dims (0 along broadcast dims), and how each operand is read (contiguously like the
// output, as one scalar, or through its strides).
#pragma once

#include <cstdint>
#include <string>
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

/// The offset of output element `i` in an operand of these strides over the collapsed `dims`:
/// "(i / 1024 % 64) * 1024 + i % 1024" ("0" where every stride is 0).
std::string strided_offset(const Shape& dims, const std::vector<int64_t>& strides);

/// Where operand k of `layout` is read for output element `i`: "i", "0" or its strided offset.
std::string operand_offset(const BroadcastLayout& layout, size_t k);

}  // namespace dlc::codegen::cuda
