// Shape inference of the training ops: gradients have their primal's type; updates return the
// new values of their state operands.
#include "ir/infer.h"

namespace dlc::ir {

namespace {
void same_type(const InferContext& ctx, int a, int b, const char* what) {
  if (ctx.input(a) != ctx.input(b))
    ctx.fail("{}: {} and {} must have one type", what, ctx.input(a).str(), ctx.input(b).str());
}
// An update's gradient (operand 1): the parameter's type, or a 16-bit gradient of an f32
// parameter (a folded Cast: the kernels widen it as they load it).
void check_grad(const InferContext& ctx) {
  const TensorType &param = ctx.input(0), &grad = ctx.input(1);
  if (grad.shape == param.shape && param.dtype == DType::F32 && is_half(grad.dtype)) return;
  same_type(ctx, 0, 1, "param and grad");
}
void scalar_f32(const InferContext& ctx, int i, const char* what) {
  if (ctx.input(i) != TensorType{DType::F32, {}})
    ctx.fail("{} must be an f32 scalar, got {}", what, ctx.input(i).str());
}
// An update's optional apply operand (input i): a bool scalar.
void optional_apply(const InferContext& ctx, int i) {
  if (ctx.has_input(i) && ctx.input(i) != TensorType{DType::Bool, {}})
    ctx.fail("apply must be a bool scalar, got {}", ctx.input(i).str());
}
}  // namespace

void infer_ReluGrad(InferContext& ctx) {
  same_type(ctx, 0, 1, "dy and y");
  ctx.outputs[0] = ctx.input(0);
}

void infer_SoftmaxCrossEntropyGrad(InferContext& ctx) {
  if (ctx.input(0).numel() != 1 && ctx.attrs().s("reduction", "mean") != "none")
    ctx.fail("dloss must be a scalar, got {}", ctx.input(0).str());
  ctx.outputs[0] = ctx.input(1);
}

void infer_ConvGradFilter(InferContext& ctx) {
  const TensorType& dy = ctx.input(0);
  const TensorType& x = ctx.input(1);
  const Shape& k = ctx.attrs().ints("kernel_shape");
  const int64_t group = ctx.attrs().i("group", 1);
  if (x.rank() != dy.rank() || x.rank() < 3 || int64_t(k.size()) != x.rank() - 2 || x.shape[1] % group)
    ctx.fail("dy {} and x {} do not fit kernel_shape {} and group {}", dy.str(), x.str(), shape_str(k),
             group);
  Shape w = {dy.shape[1], x.shape[1] / group};
  w.insert(w.end(), k.begin(), k.end());
  ctx.outputs[0] = TensorType{x.dtype, w};
  if (ctx.num_outputs() > 1) ctx.outputs[1] = TensorType{dy.dtype, {dy.shape[1]}};
}

void infer_MaxPoolGrad(InferContext& ctx) { ctx.outputs[0] = ctx.input(1); }

void infer_BatchNormGrad(InferContext& ctx) {
  same_type(ctx, 0, 1, "dy and x");
  const TensorType& x = ctx.input(1);
  // The scale has x's dtype, or f32 with 16-bit x (mixed precision's batch norm).
  const DType scale_dtype = is_half(x.dtype) && ctx.input(2).dtype == DType::F32 ? DType::F32 : x.dtype;
  if (x.rank() < 2 || ctx.input(2) != TensorType{scale_dtype, {x.shape[1]}})
    ctx.fail("scale {} must be [C] of x {}", ctx.input(2).str(), x.str());
  check_activation(ctx);
  if (ctx.attrs().has("activation") != ctx.has_input(3))
    ctx.fail("a folded Relu gradient (activation) and its Relu result y come together");
  if (ctx.has_input(3)) same_type(ctx, 0, 3, "dy and y");
  ctx.outputs[0] = x;
  ctx.outputs[1] = ctx.outputs[2] = ctx.input(2);
}

void infer_SgdUpdate(InferContext& ctx) {
  check_grad(ctx);
  same_type(ctx, 0, 2, "param and velocity");
  scalar_f32(ctx, 3, "lr");
  optional_apply(ctx, 4);
  ctx.outputs[0] = ctx.outputs[1] = ctx.input(0);
}

void infer_AdamUpdate(InferContext& ctx) {
  check_grad(ctx);
  same_type(ctx, 0, 2, "param and m");
  same_type(ctx, 0, 3, "param and v");
  scalar_f32(ctx, 4, "lr");
  scalar_f32(ctx, 5, "step");
  optional_apply(ctx, 6);
  ctx.outputs[0] = ctx.outputs[1] = ctx.outputs[2] = ctx.input(0);
}

void infer_RmspropUpdate(InferContext& ctx) {
  check_grad(ctx);
  same_type(ctx, 0, 2, "param and square_avg");
  const bool centered = ctx.attrs().i("centered", 0) != 0;
  const bool momentum = ctx.attrs().f("momentum", 0) != 0;
  scalar_f32(ctx, 3, "lr");
  if (ctx.has_input(4) != centered)
    ctx.fail("grad_avg must be given exactly when centered=1 (centered={})", int(centered));
  if (ctx.has_input(5) != momentum)
    ctx.fail("momentum_buffer must be given exactly when momentum != 0 (momentum={})",
             ctx.attrs().f("momentum", 0));
  if (centered) same_type(ctx, 0, 4, "param and grad_avg");
  if (momentum) same_type(ctx, 0, 5, "param and momentum_buffer");
  optional_apply(ctx, 6);
  for (TensorType& out : ctx.outputs) out = ctx.input(0);
}

}  // namespace dlc::ir
