// Shape inference of the reduction family: Reduce* {axes, keepdims}, ArgMax/ArgMin, CumSum and
// Softmax/LogSoftmax.
#include <algorithm>

#include "ir/infer.h"

namespace dlc::ir {

namespace {

enum class Elems { Numeric, Float };

void check_dtype(const InferContext& ctx, Elems elems) {
  const TensorType& x = ctx.input(0);
  if (elems == Elems::Float ? !is_floating(x.dtype) : !(is_floating(x.dtype) || is_integer(x.dtype)))
    ctx.fail("expects a {} input, got {}", elems == Elems::Float ? "floating-point" : "numeric", x.str());
}

// Reduce* {axes: sorted, unique, non-negative (empty = all), keepdims}.
void reduce(InferContext& ctx, Elems elems) {
  check_dtype(ctx, elems);
  const TensorType& x = ctx.input(0);
  const std::vector<int64_t> axes = ctx.attrs().ints("axes", {});
  const bool keepdims = ctx.attrs().i("keepdims", 1) != 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= x.rank())
      ctx.fail("axis {} is out of range for input {}", axes[i], x.str());
    if (i > 0 && axes[i] <= axes[i - 1]) ctx.fail("axes must be sorted and unique");
  }
  ctx.outputs[0] = TensorType{x.dtype, reduced_shape(x.shape, axes, keepdims)};
}

void arg_reduce(InferContext& ctx) {
  check_dtype(ctx, Elems::Numeric);
  const TensorType& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail("expects an input of rank >= 1, got {}", x.str());
  int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis", 0), x.rank());
  if (x.shape[size_t(axis)] == 0) ctx.fail("cannot take the arg-extremum over an empty axis of {}", x.str());
  Shape out = x.shape;
  if (ctx.attrs().i("keepdims", 1) != 0)
    out[size_t(axis)] = 1;
  else
    out.erase(out.begin() + axis);
  ctx.outputs[0] = TensorType{DType::I64, out};
}

// An op over one axis that keeps its input's type.
void along_axis(InferContext& ctx, Elems elems, int64_t default_axis) {
  check_dtype(ctx, elems);
  const TensorType& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail("expects an input of rank >= 1, got {}", x.str());
  normalize_axis(ctx, ctx.attrs().i("axis", default_axis), x.rank());
  ctx.outputs[0] = x;
}

}  // namespace

void infer_ReduceL1(InferContext& ctx) { reduce(ctx, Elems::Numeric); }
void infer_ReduceL2(InferContext& ctx) { reduce(ctx, Elems::Float); }
void infer_ReduceLogSum(InferContext& ctx) { reduce(ctx, Elems::Float); }
void infer_ReduceLogSumExp(InferContext& ctx) { reduce(ctx, Elems::Float); }
void infer_ReduceMax(InferContext& ctx) { reduce(ctx, Elems::Numeric); }
void infer_ReduceMean(InferContext& ctx) { reduce(ctx, Elems::Numeric); }
void infer_ReduceMin(InferContext& ctx) { reduce(ctx, Elems::Numeric); }
void infer_ReduceProd(InferContext& ctx) { reduce(ctx, Elems::Numeric); }
void infer_ReduceSum(InferContext& ctx) { reduce(ctx, Elems::Numeric); }
void infer_ReduceSumSquare(InferContext& ctx) { reduce(ctx, Elems::Numeric); }
void infer_ArgMax(InferContext& ctx) { arg_reduce(ctx); }
void infer_ArgMin(InferContext& ctx) { arg_reduce(ctx); }
void infer_TopKIndices(InferContext& ctx) {
  check_dtype(ctx, Elems::Numeric);
  const TensorType& x = ctx.input(0);
  if (x.rank() == 0) ctx.fail("expects an input of rank >= 1, got {}", x.str());
  const int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis", -1), x.rank());
  const int64_t k = ctx.attrs().i("k", 1);
  if (k < 0 || k > x.shape[size_t(axis)]) ctx.fail("k {} is outside [0, {}]", k, x.shape[size_t(axis)]);
  Shape out = x.shape;
  out[size_t(axis)] = k;
  ctx.outputs[0] = TensorType{DType::I64, out};
}
void infer_CumSum(InferContext& ctx) { along_axis(ctx, Elems::Numeric, 0); }
void infer_Softmax(InferContext& ctx) { along_axis(ctx, Elems::Float, -1); }
void infer_LogSoftmax(InferContext& ctx) { along_axis(ctx, Elems::Float, -1); }

}  // namespace dlc::ir
