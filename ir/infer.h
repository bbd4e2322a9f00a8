// Shape and type inference: one function per op (infer_<Op>), written in ir/infer/<family>.cc.
// Each reads its node's input types and attributes, checks them, and sets every output type.
#pragma once

#include <fmt/format.h>

#include <vector>

#include "dlc/error.h"
#include "ir/graph.h"

namespace dlc::ir {

struct InferContext {
  const Node& node;
  std::vector<TensorType> outputs;  // sized to the node's output count; fill every entry
  /// When not empty, the input types the op's inference sees in place of the node's (a
  /// channels-last node's inputs in channels-first order, dlc/channels_last.h).
  std::vector<TensorType> input_types;

  int num_inputs() const { return int(node.inputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && node.inputs[i] != nullptr; }
  const TensorType& input(int i) const;  // fails if absent
  const Attrs& attrs() const { return node.attrs; }
  int num_outputs() const { return int(outputs.size()); }

  /// Throws dlc::Error "node 'NAME' (Op): message".
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    fail_message(fmt::format(f, std::forward<Args>(args)...));
  }
  [[noreturn]] void fail_message(const std::string& msg) const;
};

/// Numpy broadcasting of two shapes; throws naming the node on mismatch.
Shape broadcast_shapes(const InferContext& ctx, const Shape& a, const Shape& b);
/// Normalizes a possibly negative axis against rank; fails if out of range.
int64_t normalize_axis(const InferContext& ctx, int64_t axis, int64_t rank);
/// Fails unless input `i` is an index operand: i32 or i64.
void check_indices(const InferContext& ctx, int i);
/// Fails where GatherElements' `indices` (of the data's rank) exceed `data` off `axis`.
void check_gather_elements_extent(const InferContext& ctx, const Shape& indices, const Shape& data,
                                  int64_t axis);
/// The result dims of reducing `dims` over `axes` (sorted; empty = all): reduced dims kept as 1
/// with keepdims, else dropped.
Shape reduced_shape(const Shape& dims, const std::vector<int64_t>& axes, bool keepdims);
/// A folded activation epilogue (attribute `activation` of MatMul, Conv, BatchNormalization and
/// BatchNormGrad): absent, or "relu" on floating-point operands.
void check_activation(const InferContext& ctx);

#define DLC_OP(name, min_in, max_in, min_out, max_out) void infer_##name(InferContext& ctx);
#include "ir/ops.def"
#undef DLC_OP

/// Runs the op's inference for a node whose inputs are set; returns the output types.
std::vector<TensorType> infer_types(const Node& node, int num_outputs);

}  // namespace dlc::ir
