// The shared parts of shape inference: the context, broadcasting, axis normalization, reduced
// shapes.
#include "ir/infer.h"

#include <algorithm>

#include "dlc/channels_last.h"

namespace dlc::ir {

const TensorType& InferContext::input(int i) const {
  if (!has_input(i)) fail("input {} is required", i);
  return input_types.empty() ? node.inputs[i]->type : input_types[size_t(i)];
}

void InferContext::fail_message(const std::string& msg) const {
  throw Error(fmt::format("node '{}' ({}): {}", node.name, op_name(node.op), msg));
}

Shape broadcast_shapes(const InferContext& ctx, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      ctx.fail("shapes {} and {} do not broadcast", shape_str(a), shape_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t normalize_axis(const InferContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    ctx.fail("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

void check_indices(const InferContext& ctx, int i) {
  DType t = ctx.input(i).dtype;
  if (t != DType::I64 && t != DType::I32) ctx.fail("indices must be i32 or i64, got {}", ctx.input(i).str());
}

void check_gather_elements_extent(const InferContext& ctx, const Shape& indices, const Shape& data,
                                  int64_t axis) {
  for (size_t d = 0; d < data.size(); ++d)
    if (int64_t(d) != axis && indices[d] > data[d])
      ctx.fail("indices {} exceed the data {} on axis {}", shape_str(indices), shape_str(data), d);
}

Shape reduced_shape(const Shape& dims, const std::vector<int64_t>& axes, bool keepdims) {
  Shape out;
  for (int64_t d = 0; d < int64_t(dims.size()); ++d) {
    const bool reduced = axes.empty() || std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced || keepdims) out.push_back(reduced ? 1 : dims[size_t(d)]);
  }
  return out;
}

void check_activation(const InferContext& ctx) {
  if (!ctx.attrs().has("activation")) return;
  const std::string& act = ctx.attrs().s("activation");
  if (act != "relu") ctx.fail("unknown activation '{}' (only \"relu\")", act);
  if (!is_floating(ctx.input(0).dtype))
    ctx.fail("an activation needs floating-point operands, got {}", ctx.input(0).str());
}

std::vector<TensorType> infer_types(const Node& node, int num_outputs) {
  InferContext ctx{node, std::vector<TensorType>(size_t(num_outputs)), {}};
  const OpInfo& info = node.info();
  int n_in = int(node.inputs.size());
  if (n_in < info.min_inputs || (info.max_inputs >= 0 && n_in > info.max_inputs))
    ctx.fail("takes {}..{} inputs, got {}", info.min_inputs, info.max_inputs, n_in);
  if (num_outputs < info.min_outputs || (info.max_outputs >= 0 && num_outputs > info.max_outputs))
    ctx.fail("has {}..{} outputs, got {}", info.min_outputs, info.max_outputs, num_outputs);
  for (int i = 0; i < info.min_inputs; ++i)
    if (!node.inputs[i]) ctx.fail("input {} is required", i);
  if (!is_channels_last(node.attrs)) {
    info.infer(ctx);
    return ctx.outputs;
  }
  // Channels-last: the op's inference on the channels-first types, its results permuted back.
  if (!takes_channels_last(op_name(node.op))) ctx.fail("has no channels-last form");
  for (const Value* v : node.inputs) {
    TensorType t = v ? v->type : TensorType{};
    t.shape = channels_first_dims(t.shape);
    ctx.input_types.push_back(t);
  }
  info.infer(ctx);
  for (TensorType& t : ctx.outputs) t.shape = channels_last_dims(t.shape);
  return ctx.outputs;
}

}  // namespace dlc::ir
