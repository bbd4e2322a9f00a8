// Gradient rules of the reductions and the normalizing scans: the gradient of a Reduce* is
// broadcast back over the reduced axes; Softmax/LogSoftmax are composed of core ops.
#include <numeric>

#include "passes/grad/rules.h"

namespace dlc::passes::grad {

using ir::OpKind;

namespace {

// The axes a Reduce* node reduces (every axis when its attribute is empty).
std::vector<int64_t> reduced_axes(const GradContext& c) {
  std::vector<int64_t> axes = c.node().attrs.ints("axes", {});
  if (axes.empty()) {
    axes.resize(c.x(0)->type.shape.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  return axes;
}

// `v`, of the Reduce*'s output shape, with the reduced axes kept as size 1 so that it
// broadcasts against the input.
ir::Value* kept(GradContext& c, ir::Value* v) {
  Shape shape = c.x(0)->type.shape;
  for (int64_t a : reduced_axes(c)) shape[size_t(a)] = 1;
  return c.reshape(v, shape);
}

// `v`, of the Reduce*'s output shape, broadcast to the input's shape.
ir::Value* unreduce(GradContext& c, ir::Value* v) { return c.expand(kept(c, v), c.x(0)->type.shape); }

int64_t reduced_count(const GradContext& c) {
  int64_t count = 1;
  for (int64_t a : reduced_axes(c)) count *= c.x(0)->type.shape[size_t(a)];
  return count;
}

// ReduceSum(v) over `axis` (normalized), kept.
ir::Value* sum_along(GradContext& c, ir::Value* v, int64_t axis) {
  Attrs a;
  a.set("axes", std::vector<int64_t>{axis});
  a.set("keepdims", int64_t(1));
  return c.emit(OpKind::ReduceSum, {v}, a);
}

int64_t softmax_axis(const GradContext& c) {
  const int64_t axis = c.node().attrs.i("axis", -1);
  return axis < 0 ? axis + c.x(0)->type.rank() : axis;
}

// ReduceMax/ReduceMin: dy shared evenly among the elements equal to the extremum (PyTorch's
// amax/amin; torch.max(dim) would pick one index instead).
void grad_reduce_extremum(GradContext& c) {
  const DType t = c.x(0)->type.dtype;
  ir::Value* hit = c.cast(c.emit(OpKind::Equal, {c.x(0), kept(c, c.y())}), t);
  Attrs a;
  a.set("axes", reduced_axes(c));
  a.set("keepdims", int64_t(1));
  ir::Value* ties = c.emit(OpKind::ReduceSum, {hit}, a);
  c.set_dx(0, c.mul(hit, c.div(kept(c, c.dy()), ties)));
}

// The arithmetic of a (log-)softmax gradient runs in f32; a half softmax (mixed precision) gets
// its half y and dy widened and dx narrowed back, casts that fusion folds into the kernels.
ir::Value* widened(GradContext& c, ir::Value* v) {
  return is_half(v->type.dtype) ? c.cast(v, DType::F32) : v;
}

}  // namespace

void grad_reduce_sum(GradContext& c) { c.set_dx(0, unreduce(c, c.dy())); }

void grad_reduce_mean(GradContext& c) {
  c.set_dx(0, c.scale(unreduce(c, c.dy()), 1.0 / double(reduced_count(c))));
}

void grad_reduce_max(GradContext& c) { grad_reduce_extremum(c); }

void grad_reduce_min(GradContext& c) { grad_reduce_extremum(c); }

void grad_reduce_prod(GradContext& c) {
  // dx_i = dy · Π_{j≠i} x_j, exact where x has zeros (as PyTorch's prod backward): with no zero
  // in the group that is y / x_i; with one zero, the product of the rest at the zero and 0
  // elsewhere; with two or more zeros, 0.
  const DType t = c.x(0)->type.dtype;
  Attrs a;
  a.set("axes", reduced_axes(c));
  a.set("keepdims", int64_t(1));
  ir::Value* is_zero = c.emit(OpKind::Equal, {c.x(0), c.scalar(t, 0.0)});
  ir::Value* safe = c.select(is_zero, c.scalar(t, 1.0), c.x(0));
  ir::Value* zeros = c.emit(OpKind::ReduceSum, {c.cast(is_zero, t)}, a);
  ir::Value* rest = c.emit(OpKind::ReduceProd, {safe}, a);  // the product of the nonzero entries
  ir::Value* at_zero = c.keep_where(c.emit(OpKind::Equal, {zeros, c.scalar(t, 1.0)}), rest);
  ir::Value* elsewhere = c.keep_where(c.emit(OpKind::Equal, {zeros, c.scalar(t, 0.0)}), c.div(rest, safe));
  c.set_dx(0, c.mul(kept(c, c.dy()), c.select(is_zero, c.expand(at_zero, c.x(0)->type.shape), elsewhere)));
}

void grad_reduce_sum_square(GradContext& c) { c.set_dx(0, c.mul(kept(c, c.dy()), c.scale(c.x(0), 2.0))); }

void grad_reduce_l1(GradContext& c) { c.set_dx(0, c.mul(kept(c, c.dy()), c.emit(OpKind::Sign, {c.x(0)}))); }

void grad_reduce_l2(GradContext& c) {
  // x * dy / y, and 0 where the norm is 0 (PyTorch's norm backward).
  ir::Value* y = kept(c, c.y());
  ir::Value* zero = c.emit(OpKind::Equal, {y, c.scalar(y->type.dtype, 0.0)});
  ir::Value* d = c.mul(c.x(0), c.div(kept(c, c.dy()), y));
  c.set_dx(0, c.select(zero, c.scalar(y->type.dtype, 0.0), d));
}

void grad_reduce_log_sum(GradContext& c) {
  // y = log(s): dx = dy / s = dy / exp(y).
  c.set_dx(0, unreduce(c, c.div(c.dy(), c.emit(OpKind::Exp, {c.y()}))));
}

void grad_reduce_log_sum_exp(GradContext& c) {
  // dx = dy * softmax(x) = dy * exp(x - y).
  ir::Value* p = c.emit(OpKind::Exp, {c.sub(c.x(0), kept(c, c.y()))});
  c.set_dx(0, c.mul(kept(c, c.dy()), p));
}

void grad_softmax(GradContext& c) {
  // dx = y * (dy - Σ dy·y) along the axis: one SoftmaxGrad (in the half type too, f32 inside).
  Attrs a;
  a.set("axis", softmax_axis(c));
  c.set_dx(0, c.emit(OpKind::SoftmaxGrad, {c.dy(), c.y()}, a));
}

void grad_log_softmax(GradContext& c) {
  // dx = dy - exp(y) * Σ dy along the axis.
  ir::Value* dy = widened(c, c.dy());
  ir::Value* s = sum_along(c, dy, softmax_axis(c));
  ir::Value* dx = c.sub(dy, c.mul(c.emit(OpKind::Exp, {widened(c, c.y())}), s));
  c.set_dx(0, c.cast(dx, c.y()->type.dtype));
}

void grad_cum_sum(GradContext& c) {
  // Each x_i feeds the sums at and after i (before i when reversed): the same scan of dy, run
  // the other way.
  Attrs a = c.node().attrs;
  a.set("reverse", int64_t(c.node().attrs.i("reverse", 0) == 0));
  c.set_dx(0, c.emit(OpKind::CumSum, {c.dy()}, a));
}

}  // namespace dlc::passes::grad
