// Shape inference of the norm family: batch/instance/layer normalization, dropout and the
// NLL / softmax cross-entropy losses.
#include "ir/infer.h"

namespace dlc::ir {

namespace {

const TensorType& float_input(const InferContext& ctx, int i, const char* what) {
  const TensorType& t = ctx.input(i);
  if (!is_floating(t.dtype)) ctx.fail("{} must be floating-point, got {}", what, t.str());
  return t;
}

// Per-channel operands (scale, bias, mean, var) of X [N, C, ...]: f[C] of X's dtype.
// The per-channel inputs `first`..`last` of a normalization of x [N, C, ...]: [C], of x's dtype,
// or f32 with 16-bit x (mixed precision's batch norm, as cuDNN takes it: half data, f32
// parameters and statistics) when `f32_with_half` — then all of them f32.
void check_channel_inputs(const InferContext& ctx, const TensorType& x, int first, int last,
                          bool f32_with_half = false) {
  static const char* const kNames[] = {"X", "scale", "B", "mean", "var"};
  if (x.shape.size() < 2) ctx.fail("X must have rank >= 2 ([N, C, ...]), got {}", x.str());
  const DType want =
      f32_with_half && is_half(x.dtype) && ctx.input(first).dtype == DType::F32 ? DType::F32 : x.dtype;
  for (int i = first; i <= last; ++i) {
    const TensorType& t = ctx.input(i);
    if (t.dtype != want || t.shape != Shape{x.shape[1]})
      ctx.fail("{} must be {}[{}] like X {}, got {}", kNames[i], dtype_name(want), x.shape[1], x.str(),
               t.str());
  }
}

// Loss inputs: scores/log-probs [N, C, d1, ...], integer target [N, d1, ...], weight f[C].
// Sets output 0 (the loss) by the reduction.
void infer_loss(InferContext& ctx) {
  const TensorType& x = float_input(ctx, 0, "input");
  const TensorType& target = ctx.input(1);
  if (x.shape.size() < 2) ctx.fail("input must have rank >= 2 ([N, C, ...]), got {}", x.str());
  if (target.dtype != DType::I64 && target.dtype != DType::I32)
    ctx.fail("target must be i64 or i32, got {}", target.str());
  Shape per_position = x.shape;
  per_position.erase(per_position.begin() + 1);
  if (target.shape != per_position)
    ctx.fail("target must have shape {} for input {}, got {}", shape_str(per_position), x.str(),
             target.str());
  if (ctx.has_input(2) && ctx.input(2) != TensorType{x.dtype, {x.shape[1]}})
    ctx.fail("weight must be {}[{}], got {}", dtype_name(x.dtype), x.shape[1], ctx.input(2).str());
  const std::string reduction = ctx.attrs().s("reduction", "mean");
  if (reduction == "none")
    ctx.outputs[0] = TensorType{x.dtype, per_position};
  else if (reduction == "sum" || reduction == "mean")
    ctx.outputs[0] = TensorType{x.dtype, {}};
  else
    ctx.fail("reduction must be none, sum or mean, got '{}'", reduction);
}

}  // namespace

void infer_BatchNormalization(InferContext& ctx) {
  const TensorType& x = float_input(ctx, 0, "X");
  check_channel_inputs(ctx, x, 1, 4, /*f32_with_half=*/true);
  const bool training = ctx.attrs().i("training_mode", 0) != 0;
  if (ctx.num_outputs() > 1 && !training) ctx.fail("running_mean/running_var outputs need training_mode=1");
  check_activation(ctx);
  ctx.outputs[0] = x;
  for (int o = 1; o < ctx.num_outputs(); ++o) ctx.outputs[o] = ctx.input(3);
}

void infer_InstanceNormalization(InferContext& ctx) {
  const TensorType& x = float_input(ctx, 0, "input");
  check_channel_inputs(ctx, x, 1, 2);
  ctx.outputs[0] = x;
}

void infer_LayerNormalization(InferContext& ctx) {
  const TensorType& x = float_input(ctx, 0, "X");
  const int64_t rank = int64_t(x.shape.size());
  const int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis", -1), rank);
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const TensorType& t = ctx.input(i);
    if (t.dtype != x.dtype)
      ctx.fail("{} must be {} like X, got {}", i == 1 ? "Scale" : "B", dtype_name(x.dtype), t.str());
    if (broadcast_shapes(ctx, t.shape, normalized) != normalized)
      ctx.fail("{} {} does not broadcast to the normalized shape {}", i == 1 ? "Scale" : "B", t.str(),
               shape_str(normalized));
  }
  const std::string stash = ctx.attrs().s("stash_dtype", "f32");
  auto stats_dtype = parse_dtype(stash);
  if (!stats_dtype || !is_floating(*stats_dtype))
    ctx.fail("stash_dtype must be a float dtype, got '{}'", stash);
  Shape stats_shape(x.shape.begin(), x.shape.begin() + axis);
  stats_shape.resize(size_t(rank), 1);
  ctx.outputs[0] = x;
  if (ctx.attrs().has("y_dtype")) {
    const std::string y = ctx.attrs().s("y_dtype");
    const auto y_dtype = parse_dtype(y);
    if (!y_dtype || !is_floating(*y_dtype)) ctx.fail("y_dtype must be a float dtype, got '{}'", y);
    ctx.outputs[0].dtype = *y_dtype;
  }
  for (int o = 1; o < ctx.num_outputs(); ++o) ctx.outputs[o] = TensorType{*stats_dtype, stats_shape};
}

void infer_Dropout(InferContext& ctx) {
  const TensorType& x = float_input(ctx, 0, "data");
  const double ratio = ctx.attrs().f("ratio", 0.5);
  if (!(ratio >= 0.0 && ratio < 1.0)) ctx.fail("ratio must be in [0, 1), got {}", ratio);
  if (ctx.has_input(1) &&
      (ctx.input(1).numel() != 1 || !(is_floating(ctx.input(1).dtype) || is_integer(ctx.input(1).dtype))))
    ctx.fail("offset must be a numeric scalar, got {}", ctx.input(1).str());
  ctx.outputs[0] = x;
  if (ctx.num_outputs() > 1) ctx.outputs[1] = TensorType{DType::Bool, x.shape};
}

void infer_NegativeLogLikelihoodLoss(InferContext& ctx) { infer_loss(ctx); }

void infer_SoftmaxCrossEntropyLoss(InferContext& ctx) {
  infer_loss(ctx);
  if (ctx.num_outputs() > 1) ctx.outputs[1] = ctx.input(0);
}

}  // namespace dlc::ir
