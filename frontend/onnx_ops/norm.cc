// ONNX normalization, dropout and loss ops (opsets 7-18) onto the IR norm family. Dropout outside
// training mode is the identity (with an all-true mask); training-mode flags and ratios given as
// inputs must be compile-time constants; a training-mode Dropout without a seed gets one of its
// own.
#include "frontend/onnx_ops/translators.h"
#include "frontend/onnx_tensor.h"

namespace dlc::frontend {

namespace {

// The scalar value of an optional input known at compile time, or `dflt` when it is absent.
double constant_scalar(ImportContext& ctx, int i, const char* what, double dflt) {
  if (!ctx.has_input(i)) return dflt;
  const Tensor& t = ctx.required_constant(i, what);
  if (t.type.numel() != 1) ctx.fail("input {} ({}) must be a scalar, got {}", i, what, t.type.str());
  return t.as_double()[0];
}

// The seed of a Dropout without one: an FNV-1a hash of its output's name, so that every Dropout
// of a model draws its own masks, the same from one import to the next.
int64_t default_seed(const std::string& output) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : output) h = (h ^ ch) * 1099511628211ull;
  return int64_t(h >> 1);
}

// Binds the ONNX outputs of emit_multi's results (absent ones skipped).
void set_outputs(ImportContext& ctx, const std::vector<ir::Value*>& outs) {
  for (size_t i = 0; i < outs.size(); ++i)
    if (outs[i]) ctx.set_output(int(i), outs[i]);
}

}  // namespace

void translate_batch_norm(ImportContext& ctx) {
  bool training;
  if (ctx.opset() >= 14) {
    training = ctx.attr_int("training_mode", 0) != 0;
    if (!training && (ctx.has_output(1) || ctx.has_output(2)))
      ctx.fail("running_mean/running_var outputs require training_mode=1");
  } else {
    // Before opset 14 the optional outputs select training mode.
    if (ctx.has_output(3) || ctx.has_output(4))
      ctx.fail("the saved_mean/saved_var outputs of opset {} are not supported", ctx.opset());
    if (ctx.attr_int("spatial", 1) == 0) ctx.fail("spatial=0 (per-activation statistics) is not supported");
    training = ctx.has_output(1) || ctx.has_output(2);
  }
  Attrs attrs;
  attrs.set("epsilon", ctx.attr_float("epsilon", 1e-5));
  attrs.set("momentum", ctx.attr_float("momentum", 0.9));
  attrs.set("training_mode", int64_t(training));
  std::vector<bool> want = {true};
  if (training) want = {true, ctx.has_output(1), ctx.has_output(2)};
  auto outs = ctx.emit_multi(ir::OpKind::BatchNormalization,
                             {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                             std::move(attrs), want);
  set_outputs(ctx, outs);
}

void translate_instance_norm(ImportContext& ctx) {
  Attrs attrs;
  attrs.set("epsilon", ctx.attr_float("epsilon", 1e-5));
  ctx.set_output(0, ctx.emit(ir::OpKind::InstanceNormalization, {ctx.input(0), ctx.input(1), ctx.input(2)},
                             std::move(attrs)));
}

void translate_layer_norm(ImportContext& ctx) {
  const int64_t stash_type = ctx.attr_int("stash_type", 1);
  auto stash = dtype_from_onnx(int32_t(stash_type));
  if (!stash || !is_floating(*stash)) ctx.fail("stash_type {} is not a supported float type", stash_type);
  Attrs attrs;
  attrs.set("axis", ctx.attr_int("axis", -1));
  attrs.set("epsilon", ctx.attr_float("epsilon", 1e-5));
  attrs.set("stash_dtype", std::string(dtype_name(*stash)));
  std::vector<ir::Value*> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  auto outs = ctx.emit_multi(ir::OpKind::LayerNormalization, inputs, std::move(attrs),
                             {true, ctx.has_output(1), ctx.has_output(2)});
  set_outputs(ctx, outs);
}

void translate_dropout(ImportContext& ctx) {
  // Opsets 7-11: ratio attribute, never training. Opset 12+: ratio and training_mode inputs.
  double ratio = ctx.attr_float("ratio", 0.5);
  bool training = false;
  if (ctx.opset() >= 12) {
    ratio = constant_scalar(ctx, 1, "ratio", 0.5);
    training = constant_scalar(ctx, 2, "training_mode", 0.0) != 0.0;
  }
  if (!(ratio >= 0.0 && ratio < 1.0)) ctx.fail("ratio must be in [0, 1), got {}", ratio);
  ir::Value* x = ctx.input(0);
  if (!training) {
    ctx.set_output(0, x);
    if (ctx.has_output(1)) {
      // The mask is bool from opset 10, of the data's type before.
      const DType mask_dtype = ctx.opset() >= 10 ? DType::Bool : x->type.dtype;
      std::vector<double> ones(size_t(x->type.numel()), 1.0);
      ctx.set_output(1, ctx.constant(Tensor::from_double(mask_dtype, ones, x->type.shape), "dropout_mask"));
    }
    return;
  }
  Attrs attrs;
  attrs.set("ratio", ratio);
  attrs.set("seed", ctx.has_attr("seed") ? ctx.attr_int("seed", 0) : default_seed(ctx.node().output(0)));
  auto outs = ctx.emit_multi(ir::OpKind::Dropout, {x}, std::move(attrs), {true, ctx.has_output(1)});
  set_outputs(ctx, outs);
}

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss share their inputs and attributes.
void translate_loss(ImportContext& ctx) {
  const bool sce = ctx.node().op_type() == "SoftmaxCrossEntropyLoss";
  Attrs attrs;
  attrs.set("reduction", ctx.attr_string("reduction", "mean"));
  if (ctx.has_attr("ignore_index")) attrs.set("ignore_index", ctx.attr_int("ignore_index", 0));
  std::vector<ir::Value*> inputs = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
  std::vector<bool> want = {true};
  if (sce) want.push_back(ctx.has_output(1));
  auto outs =
      ctx.emit_multi(sce ? ir::OpKind::SoftmaxCrossEntropyLoss : ir::OpKind::NegativeLogLikelihoodLoss,
                     inputs, std::move(attrs), want);
  set_outputs(ctx, outs);
}

}  // namespace dlc::frontend
