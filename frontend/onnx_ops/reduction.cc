// ONNX reduction ops: Reduce* (axes as attribute or input), ArgMax/ArgMin, CumSum (constant axis),
// Softmax/LogSoftmax (pre-13 2-D coercion through Reshape) and the global poolings as reductions.
#include <algorithm>

#include "frontend/onnx_ops/translate_util.h"
#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {

void emit_reduce(ImportContext& ctx, ir::OpKind op, std::vector<int64_t> axes, int64_t keepdims) {
  Attrs attrs;
  attrs.set("axes", std::move(axes));
  attrs.set("keepdims", keepdims != 0 ? int64_t(1) : int64_t(0));
  ctx.set_output(0, ctx.emit(op, {ctx.input(0)}, std::move(attrs)));
}

}  // namespace

// Axes come from input 1 when present (ReduceSum since opset 13, the others since 18), else from
// the `axes` attribute; no axes means all axes unless noop_with_empty_axes makes it an identity.
void translate_reduce(ImportContext& ctx) {
  const int64_t rank = ctx.input_type(0).rank();
  std::vector<int64_t> axes =
      ctx.has_input(1) ? ctx.required_constant(1, "axes").as_int64() : ctx.attr_ints("axes");
  if (axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0) {
    ctx.set_output(0, ctx.input(0));
    return;
  }
  for (auto& a : axes) a = resolve_axis(ctx, a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) ctx.fail("axes repeat an axis");
  emit_reduce(ctx, same_named_op(ctx), std::move(axes), ctx.attr_int("keepdims", 1));
}

void translate_arg_extremum(ImportContext& ctx) {
  Attrs attrs;
  attrs.set("axis", resolve_axis(ctx, ctx.attr_int("axis", 0), ctx.input_type(0).rank()));
  attrs.set("keepdims", ctx.attr_int("keepdims", 1) != 0 ? int64_t(1) : int64_t(0));
  attrs.set("select_last_index", ctx.attr_int("select_last_index", 0) != 0 ? int64_t(1) : int64_t(0));
  ctx.set_output(0, ctx.emit(same_named_op(ctx), {ctx.input(0)}, std::move(attrs)));
}

void translate_cumsum(ImportContext& ctx) {
  const Tensor& axis = ctx.required_constant(1, "axis");
  if (axis.type.numel() != 1) ctx.fail("axis must be a scalar, got {}", axis.type.str());
  Attrs attrs;
  attrs.set("axis", resolve_axis(ctx, axis.as_int64()[0], ctx.input_type(0).rank()));
  attrs.set("exclusive", ctx.attr_int("exclusive", 0) != 0 ? int64_t(1) : int64_t(0));
  attrs.set("reverse", ctx.attr_int("reverse", 0) != 0 ? int64_t(1) : int64_t(0));
  ctx.set_output(0, ctx.emit(ir::OpKind::CumSum, {ctx.input(0)}, std::move(attrs)));
}

void translate_softmax(ImportContext& ctx) {
  const ir::OpKind op = same_named_op(ctx);
  ctx.set_output(0, along_softmax_axis(ctx, [&](ir::Value* x, int64_t axis) {
                   Attrs attrs;
                   attrs.set("axis", axis);
                   return ctx.emit(op, {x}, std::move(attrs));
                 }));
}

// GlobalAveragePool / GlobalMaxPool: ReduceMean / ReduceMax over the spatial axes, kept.
void translate_global_pool(ImportContext& ctx) {
  const int64_t rank = ctx.input_type(0).rank();
  if (rank < 2) ctx.fail("expects an input of rank >= 2 (N, C, ...), got {}", ctx.input_type(0).str());
  if (rank == 2) {
    ctx.set_output(0, ctx.input(0));
    return;
  }
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  const bool average = ctx.node().op_type() == "GlobalAveragePool";
  emit_reduce(ctx, average ? ir::OpKind::ReduceMean : ir::OpKind::ReduceMax, std::move(axes), 1);
}

}  // namespace dlc::frontend
