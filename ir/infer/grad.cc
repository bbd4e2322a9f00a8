// Shape inference of the gradient ops (ir/ops/grad.def): each gives the gradient of a forward
// op's input, whose shape is known from the forward operands or a `shape` attribute.
#include "ir/infer.h"

namespace dlc::ir {

namespace {

// The `shape` attribute (the forward input's shape), checked to have `rank` non-negative dims.
Shape forward_shape(const InferContext& ctx, int64_t rank) {
  const Shape& shape = ctx.attrs().ints("shape");
  if (int64_t(shape.size()) != rank) ctx.fail("shape {} must have rank {}", shape_str(shape), rank);
  for (int64_t d : shape)
    if (d < 0) ctx.fail("shape {} has a negative dim", shape_str(shape));
  return shape;
}

const TensorType& float_dy(const InferContext& ctx) {
  const TensorType& dy = ctx.input(0);
  if (!is_floating(dy.dtype)) ctx.fail("dy must be floating-point, got {}", dy.str());
  return dy;
}

}  // namespace

void infer_LayerNormGrad(InferContext& ctx) {
  const TensorType& dy = float_dy(ctx);
  const TensorType& x = ctx.input(1);
  // dy may be a half type where x is f32 (mixed precision's half layer norm result).
  if (dy.shape != x.shape || !is_floating(x.dtype))
    ctx.fail("dy {} and x {} must be floats of one shape", dy.str(), x.str());
  const int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis", -1), x.rank());
  const TensorType normalized{x.dtype, Shape(x.shape.begin() + axis, x.shape.end())};
  if (ctx.input(2) != normalized)
    ctx.fail("scale {} must be {} (the normalized shape of x)", ctx.input(2).str(), normalized.str());
  ctx.outputs[0] = x;
  ctx.outputs[1] = ctx.outputs[2] = normalized;
}

void infer_SoftmaxGrad(InferContext& ctx) {
  const TensorType& dy = float_dy(ctx);
  if (ctx.input(1) != dy) ctx.fail("dy {} and y {} must have one type", dy.str(), ctx.input(1).str());
  normalize_axis(ctx, ctx.attrs().i("axis", -1), dy.rank());
  ctx.outputs[0] = dy;
}

void infer_GatherGrad(InferContext& ctx) {
  const TensorType& dy = float_dy(ctx);
  check_indices(ctx, 1);
  const TensorType& idx = ctx.input(1);
  const int64_t rank = dy.rank() - idx.rank() + 1;
  const Shape data = forward_shape(ctx, rank);
  const int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis", 0), rank);
  Shape gathered(data.begin(), data.begin() + axis);
  gathered.insert(gathered.end(), idx.shape.begin(), idx.shape.end());
  gathered.insert(gathered.end(), data.begin() + axis + 1, data.end());
  if (gathered != dy.shape)
    ctx.fail("dy {} is not the gather of {} by indices {} along axis {}", dy.str(), shape_str(data),
             idx.str(), axis);
  ctx.outputs[0] = TensorType{dy.dtype, data};
}

void infer_GatherElementsGrad(InferContext& ctx) {
  const TensorType& dy = float_dy(ctx);
  check_indices(ctx, 1);
  const TensorType& idx = ctx.input(1);
  if (idx.shape != dy.shape) ctx.fail("dy {} must have the indices' shape {}", dy.str(), idx.str());
  const Shape data = forward_shape(ctx, dy.rank());
  check_gather_elements_extent(ctx, idx.shape, data,
                               normalize_axis(ctx, ctx.attrs().i("axis", 0), dy.rank()));
  ctx.outputs[0] = TensorType{dy.dtype, data};
}

void infer_SliceGrad(InferContext& ctx) {
  const TensorType& dy = float_dy(ctx);
  const Shape shape = forward_shape(ctx, dy.rank());
  for (int64_t d = 0; d < dy.rank(); ++d)
    if (dy.shape[d] > shape[d])
      ctx.fail("dy {} is larger than the input shape {}", dy.str(), shape_str(shape));
  const size_t n = ctx.attrs().ints("starts").size();
  if (ctx.attrs().ints("axes").size() != n || ctx.attrs().ints("steps", Shape(n, 1)).size() != n)
    ctx.fail("starts, axes and steps must have one entry per sliced axis");
  ctx.outputs[0] = TensorType{dy.dtype, shape};
}

void infer_AveragePoolGrad(InferContext& ctx) {
  const TensorType& dy = float_dy(ctx);
  const Shape shape = forward_shape(ctx, dy.rank());
  if (dy.rank() < 3 || shape[0] != dy.shape[0] || shape[1] != dy.shape[1])
    ctx.fail("dy {} must be N x C x D… like the input shape {}", dy.str(), shape_str(shape));
  if (ctx.attrs().ints("kernel_shape").size() != size_t(dy.rank() - 2))
    ctx.fail("kernel_shape {} does not match dy {}", shape_str(ctx.attrs().ints("kernel_shape")), dy.str());
  ctx.outputs[0] = TensorType{dy.dtype, shape};
}

void infer_Gradient(InferContext& ctx) {
  if (!is_floating(ctx.input(0).dtype)) ctx.fail("y must be floating-point, got {}", ctx.input(0).str());
  if (ctx.num_outputs() != ctx.num_inputs() - 1)
    ctx.fail("has {} outputs for {} xs", ctx.num_outputs(), ctx.num_inputs() - 1);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!is_floating(ctx.input(i).dtype))
      ctx.fail("x {} must be floating-point, got {}", i, ctx.input(i).str());
    ctx.outputs[size_t(i - 1)] = ctx.input(i);
  }
}

}  // namespace dlc::ir
