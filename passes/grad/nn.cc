// Gradient rules of the nn ops: MatMul, convolutions and pooling.
#include "passes/grad/rules.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::passes::grad {

using ir::OpKind;

namespace {

Attrs matmul_attrs(bool ta, bool tb) {
  Attrs a;
  if (ta) a.set("transpose_a", int64_t(1));
  if (tb) a.set("transpose_b", int64_t(1));
  return a;
}

// Copies the window attributes of a Conv/pool node.
Attrs window_attrs(const ir::Node& n, const Shape& kernel) {
  Attrs a;
  const size_t spatial = kernel.size();
  a.set("kernel_shape", kernel);
  a.set("strides", n.attrs.ints("strides", Shape(spatial, 1)));
  a.set("pads", n.attrs.ints("pads", Shape(2 * spatial, 0)));
  a.set("dilations", n.attrs.ints("dilations", Shape(spatial, 1)));
  return a;
}

// A bias gradient: dy [N, C, D…] summed to [C].
ir::Value* sum_over_batch_and_space(GradContext& c, ir::Value* dy) {
  std::vector<int64_t> axes = {0};
  for (int64_t d = 2; d < dy->type.rank(); ++d) axes.push_back(d);
  Attrs r;
  r.set("axes", axes);
  r.set("keepdims", int64_t(0));
  return c.emit(OpKind::ReduceSum, {dy}, r);
}

}  // namespace

void require_no_activation(const GradContext& c) {
  if (c.node().attrs.has("activation"))
    throw Error("autodiff: " + std::string(ir::op_name(c.node().op)) + " '" + c.node().name +
                "' has a folded activation epilogue (fusion runs after autodiff)");
}

void grad_matmul(GradContext& c) {
  require_no_activation(c);
  // Batch dims broadcast like numpy, so each operand's gradient is summed back to its shape. A
  // 1-D operand is promoted to a matrix ([K] as [1, K] on the left, [K, 1] on the right) and dy
  // given the matching unit dim.
  const bool ta = c.node().attrs.i("transpose_a", 0) != 0, tb = c.node().attrs.i("transpose_b", 0) != 0;
  ir::Value *a = c.x(0), *b = c.x(1), *dy = c.dy();
  // A fused epilogue (alpha * product + bias + residual): the bias gets dy summed to its shape,
  // the residual dy, the product alpha * dy.
  if (ir::Value* bias = c.x(2)) c.set_dx(2, c.reduce_to(dy, bias->type.shape));
  if (c.x(3)) c.set_dx(3, dy);
  if (const double alpha = c.node().attrs.f("alpha", 1.0); alpha != 1.0) dy = c.scale(dy, alpha);
  const Shape &a_shape = a->type.shape, &b_shape = b->type.shape;
  if (a->type.rank() == 1) {
    a = c.reshape(a, {1, a_shape[0]});
    Shape s = dy->type.shape;
    s.insert(s.end() - (b->type.rank() == 1 ? 0 : 1), 1);
    dy = c.reshape(dy, s);
  }
  if (b->type.rank() == 1) {
    b = c.reshape(b, {b_shape[0], 1});
    Shape s = dy->type.shape;
    s.push_back(1);
    dy = c.reshape(dy, s);
  }
  // A matrix b under a batched a (a linear layer on [batch…, M, K]): db contracts over the
  // batch and M alike, so both fold into one dim — one GEMM instead of a batched GEMM summed
  // over the batch (a Transpose of db then folds into it too, passes/epilogue_fusion.h).
  ir::Value *a_rows = a, *dy_rows = dy;
  if (!ta && b->type.rank() == 2 && a->type.rank() > 2 && a->type.numel() > 0 && dy->type.numel() > 0) {
    const int64_t k = a->type.shape.back(), n = dy->type.shape.back();
    a_rows = c.reshape(a, {a->type.numel() / k, k});
    dy_rows = c.reshape(dy, {dy->type.numel() / n, n});
  }
  ir::Value *da, *db;
  if (!ta && !tb) {
    da = c.emit(OpKind::MatMul, {dy, b}, matmul_attrs(false, true));
    db = c.emit(OpKind::MatMul, {a_rows, dy_rows}, matmul_attrs(true, false));
  } else if (!ta && tb) {
    da = c.emit(OpKind::MatMul, {dy, b}, matmul_attrs(false, false));
    db = c.emit(OpKind::MatMul, {dy_rows, a_rows}, matmul_attrs(true, false));
  } else if (ta && !tb) {
    da = c.emit(OpKind::MatMul, {b, dy}, matmul_attrs(false, true));
    db = c.emit(OpKind::MatMul, {a, dy}, matmul_attrs(false, false));
  } else {
    da = c.emit(OpKind::MatMul, {b, dy}, matmul_attrs(true, true));
    db = c.emit(OpKind::MatMul, {dy, a}, matmul_attrs(true, true));
  }
  c.set_dx(0, c.reshape(c.reduce_to(da, a->type.shape), a_shape));
  c.set_dx(1, c.reshape(c.reduce_to(db, b->type.shape), b_shape));
}

void grad_conv(GradContext& c) {
  require_no_activation(c);
  ir::Value *x = c.x(0), *w = c.x(1), *dy = c.dy();
  const Shape kernel(w->type.shape.begin() + 2, w->type.shape.end());
  const size_t spatial = kernel.size();
  Attrs a = window_attrs(c.node(), kernel);
  a.set("group", c.node().attrs.i("group", 1));
  // dx is the transposed convolution of dy with the same weights; output_padding restores the
  // rows a strided forward convolution dropped.
  const Shape s = a.ints("strides"), p = a.ints("pads"), d = a.ints("dilations");
  Shape opad(spatial);
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t produced =
        (dy->type.shape[i + 2] - 1) * s[i] - p[i] - p[i + spatial] + d[i] * (kernel[i] - 1) + 1;
    opad[i] = x->type.shape[i + 2] - produced;
  }
  Attrs ta = a;
  ta.set("output_padding", opad);
  c.set_dx(0, c.emit(OpKind::ConvTranspose, {dy, w}, ta));
  c.set_dx(1, c.emit(OpKind::ConvGradFilter, {dy, x}, a));
  if (c.x(2)) c.set_dx(2, sum_over_batch_and_space(c, dy));
  if (c.x(3)) c.set_dx(3, dy);  // a folded residual
}

void grad_conv_transpose(GradContext& c) {
  // A transposed convolution is the adjoint of the convolution with the same weights and window,
  // so dx is that convolution of dy, and dw the convolution filter gradient with the roles of
  // input and output exchanged. output_padding only adds rows the convolution drops.
  ir::Value *x = c.x(0), *w = c.x(1), *dy = c.dy();
  const Shape kernel(w->type.shape.begin() + 2, w->type.shape.end());
  Attrs a = window_attrs(c.node(), kernel);
  a.set("group", c.node().attrs.i("group", 1));
  c.set_dx(0, c.emit(OpKind::Conv, {dy, w}, a));
  c.set_dx(1, c.emit(OpKind::ConvGradFilter, {x, dy}, a));
  if (c.x(2)) c.set_dx(2, sum_over_batch_and_space(c, dy));
  if (c.x(3)) c.set_dx(3, dy);  // a folded residual
}

void grad_maxpool(GradContext& c) {
  if (c.dy(1)) throw Error("autodiff: MaxPool indices have no gradient");
  Attrs a = c.node().attrs;
  c.set_dx(0, c.emit(OpKind::MaxPoolGrad, {c.dy(), c.x(0)}, a));
}

void grad_average_pool(GradContext& c) {
  Attrs a = c.node().attrs;
  a.set("shape", c.x(0)->type.shape);
  c.set_dx(0, c.emit(OpKind::AveragePoolGrad, {c.dy()}, a));
}

void grad_attention(GradContext& c) {
  if (c.dy(1))
    throw Error(fmt::format("autodiff: the lse output of Attention '{}' has no gradient", c.node().name));
  if (!c.y(1))
    throw Error(
        fmt::format("autodiff: Attention '{}' has no lse output, which its gradient reads", c.node().name));
  Attrs a;
  a.set("scale", c.node().attrs.f("scale", 1.0));
  for (const char* flag : {"causal", "seq_major"})
    if (c.node().attrs.i(flag, 0) != 0) a.set(flag, int64_t(1));
  auto g = c.emit_multi(OpKind::AttentionGrad, {c.dy(), c.x(0), c.x(1), c.x(2), c.y(0), c.y(1)}, a, 3);
  for (int i = 0; i < 3; ++i) c.set_dx(i, g[i]);
}

}  // namespace dlc::passes::grad
