// Gradient rules of the elementwise ops; broadcast operands get their gradient summed back to
// their own shape.
#include <numbers>

#include "passes/grad/rules.h"

namespace dlc::passes::grad {

using ir::OpKind;

void grad_add(GradContext& c) {
  c.set_dx(0, c.reduce_to(c.dy(), c.x(0)->type.shape));
  c.set_dx(1, c.reduce_to(c.dy(), c.x(1)->type.shape));
}

void grad_sub(GradContext& c) {
  c.set_dx(0, c.reduce_to(c.dy(), c.x(0)->type.shape));
  c.set_dx(1, c.reduce_to(c.emit(OpKind::Neg, {c.dy()}), c.x(1)->type.shape));
}

void grad_mul(GradContext& c) {
  c.set_dx(0, c.reduce_to(c.emit(OpKind::Mul, {c.dy(), c.x(1)}), c.x(0)->type.shape));
  c.set_dx(1, c.reduce_to(c.emit(OpKind::Mul, {c.dy(), c.x(0)}), c.x(1)->type.shape));
}

void grad_div(GradContext& c) {
  // d(a/b) = da/b - a*db/b^2 = da/b - y*db/b
  ir::Value* da = c.emit(OpKind::Div, {c.dy(), c.x(1)});
  c.set_dx(0, c.reduce_to(da, c.x(0)->type.shape));
  ir::Value* db = c.emit(OpKind::Neg, {c.emit(OpKind::Mul, {da, c.y()})});
  c.set_dx(1, c.reduce_to(db, c.x(1)->type.shape));
}

void grad_neg(GradContext& c) { c.set_dx(0, c.emit(OpKind::Neg, {c.dy()})); }

void grad_relu(GradContext& c) { c.set_dx(0, c.emit(OpKind::ReluGrad, {c.dy(), c.y()})); }

void grad_sigmoid(GradContext& c) {
  // dy * y * (1 - y)
  ir::Value* one = c.scalar(c.y()->type.dtype, 1.0);
  ir::Value* d = c.emit(OpKind::Mul, {c.y(), c.emit(OpKind::Sub, {one, c.y()})});
  c.set_dx(0, c.emit(OpKind::Mul, {c.dy(), d}));
}

void grad_tanh(GradContext& c) {
  // dy * (1 - y^2)
  ir::Value* one = c.scalar(c.y()->type.dtype, 1.0);
  ir::Value* d = c.emit(OpKind::Sub, {one, c.emit(OpKind::Mul, {c.y(), c.y()})});
  c.set_dx(0, c.emit(OpKind::Mul, {c.dy(), d}));
}

// ---- unary maths: dx = dy * f'(x), written with y where that is cheaper.

void grad_erf(GradContext& c) {
  // d erf(x) = 2/sqrt(pi) * exp(-x^2)
  ir::Value* x = c.x(0);
  ir::Value* e = c.emit(OpKind::Exp, {c.neg(c.mul(x, x))});
  c.set_dx(0, c.mul(c.dy(), c.scale(e, 2.0 * std::numbers::inv_sqrtpi)));
}

void grad_exp(GradContext& c) { c.set_dx(0, c.mul(c.dy(), c.y())); }

void grad_log(GradContext& c) { c.set_dx(0, c.div(c.dy(), c.x(0))); }

void grad_sqrt(GradContext& c) { c.set_dx(0, c.div(c.scale(c.dy(), 0.5), c.y())); }

void grad_reciprocal(GradContext& c) { c.set_dx(0, c.neg(c.mul(c.dy(), c.mul(c.y(), c.y())))); }

void grad_abs(GradContext& c) { c.set_dx(0, c.mul(c.dy(), c.emit(OpKind::Sign, {c.x(0)}))); }

void grad_sin(GradContext& c) { c.set_dx(0, c.mul(c.dy(), c.emit(OpKind::Cos, {c.x(0)}))); }

void grad_cos(GradContext& c) { c.set_dx(0, c.neg(c.mul(c.dy(), c.emit(OpKind::Sin, {c.x(0)})))); }

void grad_softplus(GradContext& c) { c.set_dx(0, c.mul(c.dy(), c.emit(OpKind::Sigmoid, {c.x(0)}))); }

void grad_tan(GradContext& c) {
  ir::Value* one = c.scalar(c.y()->type.dtype, 1.0);
  c.set_dx(0, c.mul(c.dy(), c.add(one, c.mul(c.y(), c.y()))));
}

void grad_sinh(GradContext& c) { c.set_dx(0, c.mul(c.dy(), c.emit(OpKind::Cosh, {c.x(0)}))); }

void grad_cosh(GradContext& c) { c.set_dx(0, c.mul(c.dy(), c.emit(OpKind::Sinh, {c.x(0)}))); }

namespace {

// sign·x² + k, whose (square root's) reciprocal is the derivative of the inverse trigonometric
// and hyperbolic functions.
ir::Value* quadratic(GradContext& c, double sign, double k) {
  return c.add(c.scale(c.mul(c.x(0), c.x(0)), sign), c.scalar(c.x(0)->type.dtype, k));
}

ir::Value* over_sqrt_of_quadratic(GradContext& c, double sign, double k) {
  return c.div(c.dy(), c.emit(OpKind::Sqrt, {quadratic(c, sign, k)}));
}

ir::Value* over_quadratic(GradContext& c, double sign, double k) {
  return c.div(c.dy(), quadratic(c, sign, k));
}

// x > 0, the branch test of the piecewise activations.
ir::Value* is_positive(GradContext& c) {
  return c.emit(OpKind::Greater, {c.x(0), c.scalar(c.x(0)->type.dtype, 0.0)});
}

}  // namespace

void grad_asin(GradContext& c) { c.set_dx(0, over_sqrt_of_quadratic(c, -1.0, 1.0)); }

void grad_acos(GradContext& c) { c.set_dx(0, c.neg(over_sqrt_of_quadratic(c, -1.0, 1.0))); }

void grad_atan(GradContext& c) { c.set_dx(0, over_quadratic(c, 1.0, 1.0)); }

void grad_asinh(GradContext& c) { c.set_dx(0, over_sqrt_of_quadratic(c, 1.0, 1.0)); }

void grad_acosh(GradContext& c) { c.set_dx(0, over_sqrt_of_quadratic(c, 1.0, -1.0)); }

void grad_atanh(GradContext& c) { c.set_dx(0, over_quadratic(c, -1.0, 1.0)); }

void grad_softsign(GradContext& c) {
  // y = x / (1 + |x|): y' = 1 / (1 + |x|)².
  ir::Value* d = c.add(c.emit(OpKind::Abs, {c.x(0)}), c.scalar(c.x(0)->type.dtype, 1.0));
  c.set_dx(0, c.div(c.dy(), c.mul(d, d)));
}

void grad_mish(GradContext& c) {
  // y = x·tanh(sp(x)): y' = tanh(sp) + x·sigmoid(x)·(1 - tanh(sp)²).
  ir::Value* x = c.x(0);
  ir::Value* t = c.emit(OpKind::Tanh, {c.emit(OpKind::Softplus, {x})});
  ir::Value* sech2 = c.sub(c.scalar(x->type.dtype, 1.0), c.mul(t, t));
  ir::Value* d = c.add(t, c.mul(c.mul(x, c.emit(OpKind::Sigmoid, {x})), sech2));
  c.set_dx(0, c.mul(c.dy(), d));
}

// Piecewise activations take the x <= 0 branch's slope at 0, as PyTorch does.
void grad_leaky_relu(GradContext& c) {
  ir::Value* positive = is_positive(c);
  c.set_dx(0, c.select(positive, c.dy(), c.scale(c.dy(), c.node().attrs.f("alpha", 0.01))));
}

void grad_elu(GradContext& c) {
  // x <= 0: y = alpha * (e^x - 1), so y' = y + alpha.
  const DType t = c.x(0)->type.dtype;
  ir::Value* positive = is_positive(c);
  ir::Value* slope = c.add(c.y(), c.scalar(t, c.node().attrs.f("alpha", 1.0)));
  c.set_dx(0, c.select(positive, c.dy(), c.mul(c.dy(), slope)));
}

void grad_selu(GradContext& c) {
  // x <= 0: y = gamma·alpha·(e^x - 1), so y' = y + gamma·alpha.
  const DType t = c.x(0)->type.dtype;
  const double alpha = c.node().attrs.f("alpha", 1.67326319217681884765625);
  const double gamma = c.node().attrs.f("gamma", 1.05070102214813232421875);
  ir::Value* positive = is_positive(c);
  ir::Value* slope = c.add(c.y(), c.scalar(t, gamma * alpha));
  c.set_dx(0, c.select(positive, c.scale(c.dy(), gamma), c.mul(c.dy(), slope)));
}

void grad_celu(GradContext& c) {
  // x <= 0: y = alpha·(e^(x/alpha) - 1), so y' = y / alpha + 1.
  const DType t = c.x(0)->type.dtype;
  const double alpha = c.node().attrs.f("alpha", 1.0);
  ir::Value* positive = is_positive(c);
  ir::Value* slope = c.add(c.scale(c.y(), 1.0 / alpha), c.scalar(t, 1.0));
  c.set_dx(0, c.select(positive, c.dy(), c.mul(c.dy(), slope)));
}

void grad_thresholded_relu(GradContext& c) {
  const DType t = c.x(0)->type.dtype;
  ir::Value* above = c.emit(OpKind::Greater, {c.x(0), c.scalar(t, c.node().attrs.f("alpha", 1.0))});
  c.set_dx(0, c.keep_where(above, c.dy()));
}

void grad_hard_swish(GradContext& c) {
  // y = x·clamp(x/6 + 1/2, 0, 1): 0 below -3, x/3 + 1/2 up to 3, 1 above (PyTorch's hardswish).
  ir::Value* x = c.x(0);
  const DType t = x->type.dtype;
  ir::Value* ramp = c.mul(c.dy(), c.add(c.scale(x, 1.0 / 3.0), c.scalar(t, 0.5)));
  ir::Value* upper = c.select(c.emit(OpKind::LessOrEqual, {x, c.scalar(t, 3.0)}), ramp, c.dy());
  c.set_dx(0, c.select(c.emit(OpKind::Less, {x, c.scalar(t, -3.0)}), c.scalar(t, 0.0), upper));
}

void grad_hard_sigmoid(GradContext& c) {
  // Slope alpha where 0 < alpha * x + beta < 1, else 0.
  const DType t = c.y()->type.dtype;
  ir::Value* inside = c.emit(OpKind::And, {c.emit(OpKind::Greater, {c.y(), c.scalar(t, 0.0)}),
                                           c.emit(OpKind::Less, {c.y(), c.scalar(t, 1.0)})});
  c.set_dx(0, c.keep_where(inside, c.scale(c.dy(), c.node().attrs.f("alpha", 0.2))));
}

void grad_prelu(GradContext& c) {
  ir::Value *x = c.x(0), *slope = c.x(1);
  ir::Value* negative = c.emit(OpKind::Less, {x, c.scalar(x->type.dtype, 0.0)});
  c.set_dx(0, c.reduce_to(c.select(negative, c.mul(c.dy(), slope), c.dy()), x->type.shape));
  c.set_dx(1, c.reduce_to(c.keep_where(negative, c.mul(c.dy(), x)), slope->type.shape));
}

// Sign, Floor, Ceil, Round: the derivative is zero wherever it exists, so no gradient flows
// (autodiff treats a missing input gradient as no contribution).
void grad_zero(GradContext&) {}

// ---- binary and selection ops

void grad_pow(GradContext& c) {
  // y = a^b: da = dy * b * a^(b-1); db = dy * y * ln(a) where a > 0, else 0.
  ir::Value *a = c.x(0), *b = c.x(1);
  const DType t = a->type.dtype;
  ir::Value* bf = c.cast(b, t);
  ir::Value* a_pow = c.emit(OpKind::Pow, {a, c.sub(bf, c.scalar(t, 1.0))});
  c.set_dx(0, c.reduce_to(c.mul(c.dy(), c.mul(bf, a_pow)), a->type.shape));
  if (!is_floating(b->type.dtype)) return;
  ir::Value* positive = c.emit(OpKind::Greater, {a, c.scalar(t, 0.0)});
  ir::Value* db = c.keep_where(positive, c.mul(c.dy(), c.mul(c.y(), c.emit(OpKind::Log, {a}))));
  c.set_dx(1, c.cast(c.reduce_to(db, b->type.shape), b->type.dtype));
}

namespace {

// Max/Min: the selected operand gets dy; ties split it evenly (PyTorch's maximum/minimum).
void grad_extremum(GradContext& c, OpKind a_wins) {
  ir::Value *a = c.x(0), *b = c.x(1);
  const DType t = c.dy()->type.dtype;
  ir::Value* tie = c.select(c.emit(OpKind::Equal, {a, b}), c.scalar(t, 0.5), c.scalar(t, 0.0));
  ir::Value* a_share = c.select(c.emit(a_wins, {a, b}), c.scalar(t, 1.0), tie);
  ir::Value* da = c.mul(c.dy(), a_share);
  c.set_dx(0, c.reduce_to(da, a->type.shape));
  c.set_dx(1, c.reduce_to(c.sub(c.dy(), da), b->type.shape));
}

}  // namespace

void grad_mod(GradContext& c) {
  // y = x - q·d with q = trunc(x/d) (fmod) or floor(x/d): dx = dy, dd = -dy·q, q = (x - y)/d
  // (PyTorch's fmod/remainder backward).
  ir::Value *x = c.x(0), *d = c.x(1);
  c.set_dx(0, c.reduce_to(c.dy(), x->type.shape));
  c.set_dx(1, c.reduce_to(c.neg(c.mul(c.dy(), c.div(c.sub(x, c.y()), d))), d->type.shape));
}

void grad_max(GradContext& c) { grad_extremum(c, OpKind::Greater); }

void grad_min(GradContext& c) { grad_extremum(c, OpKind::Less); }

void grad_where(GradContext& c) {
  ir::Value* cond = c.x(0);
  c.set_dx(1, c.reduce_to(c.keep_where(cond, c.dy()), c.x(1)->type.shape));
  c.set_dx(2, c.reduce_to(c.select(cond, c.scalar(c.dy()->type.dtype, 0.0), c.dy()), c.x(2)->type.shape));
}

void grad_clip(GradContext& c) {
  // As PyTorch's clamp: x gets dy where min <= x <= max; a bound gets dy where it clipped.
  ir::Value *x = c.x(0), *lo = c.x(1), *hi = c.x(2);
  ir::Value* inside = nullptr;
  auto both = [&](ir::Value* m) { return inside ? c.emit(OpKind::And, {inside, m}) : m; };
  if (lo) {
    inside = both(c.emit(OpKind::GreaterOrEqual, {x, lo}));
    c.set_dx(1, c.reduce_to(c.keep_where(c.emit(OpKind::Less, {x, lo}), c.dy()), lo->type.shape));
  }
  if (hi) {
    inside = both(c.emit(OpKind::LessOrEqual, {x, hi}));
    c.set_dx(2, c.reduce_to(c.keep_where(c.emit(OpKind::Greater, {x, hi}), c.dy()), hi->type.shape));
  }
  c.set_dx(0, inside ? c.keep_where(inside, c.dy()) : c.dy());
}

void grad_cast(GradContext& c) {
  // Only float-to-float casts carry a gradient: dy cast back to the source dtype.
  if (is_floating(c.x(0)->type.dtype) && is_floating(c.y()->type.dtype))
    c.set_dx(0, c.cast(c.dy(), c.x(0)->type.dtype));
}

}  // namespace dlc::passes::grad
