// Gradient rules of the class-index losses, NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, over scores [N, C, d…] and targets [N, d…] with optional class weights,
// ignore_index and reduction none/sum/mean (mean divides by the summed weights of the counted
// positions, as ONNX and PyTorch do).
#include <numeric>

#include "passes/grad/rules.h"

namespace dlc::passes::grad {

using ir::OpKind;

namespace {

// What both losses' gradients are made of: `weighted_hits` [N, C, d…] is w[t] at each
// position's target class and 0 elsewhere (and at ignored positions); `scale` is the gradient
// each position's loss term receives ([N, 1, d…] for reduction none, else a scalar).
struct TargetTerms {
  ir::Value* weighted_hits;
  ir::Value* scale;
};

TargetTerms target_terms(GradContext& c) {
  ir::Value *x = c.x(0), *target = c.x(1), *weight = c.x(2);
  const Shape& shape = x->type.shape;
  const DType t = x->type.dtype, index = target->type.dtype;
  Shape per_position = shape, class_axis(shape.size(), 1);
  per_position[1] = 1;
  class_axis[1] = shape[1];
  std::vector<double> ids(static_cast<size_t>(shape[1]));
  std::iota(ids.begin(), ids.end(), 0.0);
  ir::Value* target_kept = c.reshape(target, per_position);
  ir::Value* hits =
      c.emit(OpKind::Equal, {target_kept, c.constant(Tensor::from_double(index, ids, class_axis))});
  if (c.node().attrs.has("ignore_index")) {
    ir::Value* ignored =
        c.emit(OpKind::Equal, {target_kept, c.scalar(index, double(c.node().attrs.i("ignore_index")))});
    hits = c.emit(OpKind::And, {hits, c.emit(OpKind::Not, {ignored})});
  }
  ir::Value* weighted = c.cast(hits, t);
  if (weight) weighted = c.mul(weighted, c.reshape(weight, class_axis));
  const std::string reduction = c.node().attrs.s("reduction", "mean");
  ir::Value* scale = c.dy();
  if (reduction == "none") {
    scale = c.reshape(c.dy(), per_position);
  } else if (reduction == "mean") {
    Attrs all;
    all.set("keepdims", int64_t(0));
    scale = c.div(c.dy(), c.emit(OpKind::ReduceSum, {weighted}, all));
  }
  return {weighted, scale};
}

// Σ v along the class axis, kept.
ir::Value* sum_over_classes(GradContext& c, ir::Value* v) {
  Attrs a;
  a.set("axes", std::vector<int64_t>{1});
  a.set("keepdims", int64_t(1));
  return c.emit(OpKind::ReduceSum, {v}, a);
}

}  // namespace

void grad_negative_log_likelihood(GradContext& c) {
  // loss = -w[t]·x[t] per position: dx = -w[t]·scale at the target class.
  const TargetTerms terms = target_terms(c);
  c.set_dx(0, c.neg(c.mul(terms.weighted_hits, terms.scale)));
}

void grad_softmax_cross_entropy(GradContext& c) {
  // loss = -w[t]·log_softmax(x)[t]: dx = (softmax(x)·w[t] - w[t]·onehot(t))·scale; the log_prob
  // output adds LogSoftmax's gradient. The unweighted f32 loss alone has a fused kernel.
  ir::Value* x = c.x(0);
  ir::Value* dx = nullptr;
  if (c.dy() && !c.x(2) && x->type.dtype == DType::F32) {
    Attrs a;
    a.set("reduction", c.node().attrs.s("reduction", "mean"));
    if (c.node().attrs.has("ignore_index")) a.set("ignore_index", c.node().attrs.i("ignore_index"));
    dx = c.emit(OpKind::SoftmaxCrossEntropyGrad, {c.dy(), x, c.x(1)}, a);
  } else if (c.dy()) {
    const TargetTerms terms = target_terms(c);
    Attrs axis;
    axis.set("axis", int64_t(1));
    ir::Value* p = c.emit(OpKind::Softmax, {x}, axis);
    ir::Value* d = c.sub(c.mul(p, sum_over_classes(c, terms.weighted_hits)), terms.weighted_hits);
    dx = c.mul(d, terms.scale);
  }
  if (ir::Value* dlp = c.dy(1)) {
    ir::Value* d = c.sub(dlp, c.mul(c.emit(OpKind::Exp, {c.y(1)}), sum_over_classes(c, dlp)));
    dx = dx ? c.add(dx, d) : d;
  }
  c.set_dx(0, dx);
}

}  // namespace dlc::passes::grad
