// Gradient rules of the norm family: batch, layer and instance normalization, and dropout.
#include <fmt/format.h>

#include <algorithm>

#include "dlc/error.h"
#include "passes/grad/rules.h"

namespace dlc::passes::grad {

using ir::OpKind;

void grad_batchnorm(GradContext& c) {
  require_no_activation(c);
  if (c.node().attrs.i("training_mode", 0) == 0) {
    // Inference statistics are constants: dx = dy * scale / sqrt(var + eps), per channel.
    throw Error("autodiff: BatchNormalization '" + c.node().name +
                "' uses running statistics; training needs the training-mode pass");
  }
  Attrs a;
  a.set("epsilon", c.node().attrs.f("epsilon", 1e-5));
  auto g = c.emit_multi(OpKind::BatchNormGrad, {c.dy(), c.x(0), c.x(1)}, a, 3);
  c.set_dx(0, g[0]);
  c.set_dx(1, g[1]);
  c.set_dx(2, g[2]);
}

void grad_layer_norm(GradContext& c) {
  if (c.dy(1) || c.dy(2))
    throw Error(fmt::format(
        "autodiff: the mean/inv_std_dev outputs of LayerNormalization '{}' have no gradient", c.node().name));
  ir::Value *x = c.x(0), *scale = c.x(1), *bias = c.x(2);
  int64_t axis = c.node().attrs.i("axis", -1);
  if (axis < 0) axis += x->type.rank();
  const Shape normalized(x->type.shape.begin() + axis, x->type.shape.end());
  ir::Value* full_scale = c.expand(scale, normalized);
  Attrs a;
  a.set("axis", axis);
  a.set("epsilon", c.node().attrs.f("epsilon", 1e-5));
  auto g = c.emit_multi(OpKind::LayerNormGrad, {c.dy(), x, full_scale}, a, 3);
  c.set_dx(0, g[0]);
  c.set_dx(1, c.reduce_to(g[1], scale->type.shape));
  if (bias) c.set_dx(2, c.reduce_to(g[2], bias->type.shape));
}

void grad_instance_norm(GradContext& c) {
  // Instance norm of x [N, C, D…] is a layer norm of each [D…] plane: with xhat the plane
  // normalized (a LayerNormalization of unit scale), y = scale_c * xhat + bias_c, so
  // dx = LayerNormGrad(dy * scale_c), dscale = Σ dy * xhat and dbias = Σ dy over N and D….
  ir::Value *x = c.x(0), *scale = c.x(1), *dy = c.dy();
  const Shape& shape = x->type.shape;
  const int64_t n = shape[0], ch = shape[1], plane = x->type.numel() / std::max<int64_t>(n * ch, 1);
  const DType t = x->type.dtype;
  const Shape rows = {n, ch, plane}, per_channel = {ch, 1};
  ir::Value* x3 = c.reshape(x, rows);
  ir::Value* dy3 = c.reshape(dy, rows);
  ir::Value* ones = c.expand(c.scalar(t, 1.0), {plane});
  Attrs ln;
  ln.set("axis", int64_t(2));
  ln.set("epsilon", c.node().attrs.f("epsilon", 1e-5));
  ir::Value* xhat = c.emit(OpKind::LayerNormalization, {x3, ones}, ln);
  ir::Value* scaled_dy = c.mul(dy3, c.reshape(scale, per_channel));
  auto g = c.emit_multi(OpKind::LayerNormGrad, {scaled_dy, x3, ones}, ln, 3);
  c.set_dx(0, c.reshape(g[0], shape));
  Attrs r;
  r.set("axes", std::vector<int64_t>{0, 2});
  r.set("keepdims", int64_t(0));
  c.set_dx(1, c.emit(OpKind::ReduceSum, {c.mul(dy3, xhat)}, r));
  c.set_dx(2, c.emit(OpKind::ReduceSum, {dy3}, r));
}

void grad_dropout(GradContext& c) {
  // dx = dy * mask / (1 - ratio), with the mask the forward drew (training-mode makes the
  // forward output it).
  if (!c.y(1))
    throw Error(fmt::format("autodiff: Dropout '{}' has no mask output; run the training-mode pass first",
                            c.node().name));
  if (c.dy(1)) throw Error(fmt::format("autodiff: the mask of Dropout '{}' has no gradient", c.node().name));
  const double ratio = c.node().attrs.f("ratio", 0.5);
  c.set_dx(0, c.keep_where(c.y(1), c.scale(c.dy(), 1.0 / (1.0 - ratio))));
}

}  // namespace dlc::passes::grad
