// The gradient rules, one per differentiable op, and the table that finds them.
#include "passes/grad_rules.h"

#include <numeric>

#include "dlc/error.h"

namespace dlc::passes {

using ir::OpKind;

ir::Value* GradContext::emit(OpKind op, std::vector<ir::Value*> inputs, Attrs attrs) {
  return emit_multi(op, std::move(inputs), std::move(attrs), 1)[0];
}

std::vector<ir::Value*> GradContext::emit_multi(OpKind op, std::vector<ir::Value*> inputs, Attrs attrs,
                                                int outputs) {
  std::vector<std::string> names;
  for (int i = 0; i < outputs; ++i)
    names.push_back(g_.unique_value_name(node_.name + ".grad" + (i ? "." + std::to_string(i) : "")));
  return g_.add_node(op, std::move(inputs), std::move(attrs), names, node_.name + ".grad")->outputs;
}

ir::Value* GradContext::scalar(DType dtype, double v) {
  return g_.add_constant(g_.unique_value_name(node_.name + ".grad_const"),
                         Tensor::from_double(dtype, {v}, {}));
}

ir::Value* GradContext::reshape(ir::Value* v, const Shape& shape) {
  if (v->type.shape == shape) return v;
  Attrs a;
  a.set("shape", shape);
  return emit(OpKind::Reshape, {v}, a);
}

ir::Value* GradContext::reduce_to(ir::Value* v, const Shape& shape) {
  const Shape& from = v->type.shape;
  if (from == shape) return v;
  const size_t lead = from.size() - shape.size();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (i < lead || (shape[i - lead] == 1 && from[i] != 1)) axes.push_back(int64_t(i));
  if (!axes.empty()) {
    Attrs a;
    a.set("axes", axes);
    a.set("keepdims", int64_t(1));
    v = emit(OpKind::ReduceSum, {v}, a);
  }
  return reshape(v, shape);
}

namespace {

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

void grad_reshape(GradContext& c) { c.set_dx(0, c.reshape(c.dy(), c.x(0)->type.shape)); }

void grad_transpose(GradContext& c) {
  const auto& perm = c.node().attrs.ints("perm");
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
  Attrs a;
  a.set("perm", inverse);
  c.set_dx(0, c.emit(OpKind::Transpose, {c.dy()}, a));
}

Attrs matmul_attrs(bool ta, bool tb) {
  Attrs a;
  if (ta) a.set("transpose_a", int64_t(1));
  if (tb) a.set("transpose_b", int64_t(1));
  return a;
}

void grad_matmul(GradContext& c) {
  const bool ta = c.node().attrs.i("transpose_a", 0) != 0, tb = c.node().attrs.i("transpose_b", 0) != 0;
  ir::Value *a = c.x(0), *b = c.x(1), *dy = c.dy();
  if (a->type.rank() < 2 || b->type.rank() < 2) {
    // 1-D operands: not produced by the exporters we target; say so instead of guessing.
    throw Error("autodiff: MatMul with a 1-D operand has no gradient rule yet (node '" + c.node().name +
                "')");
  }
  ir::Value *da, *db;
  if (!ta && !tb) {
    da = c.emit(OpKind::MatMul, {dy, b}, matmul_attrs(false, true));
    db = c.emit(OpKind::MatMul, {a, dy}, matmul_attrs(true, false));
  } else if (!ta && tb) {
    da = c.emit(OpKind::MatMul, {dy, b}, matmul_attrs(false, false));
    db = c.emit(OpKind::MatMul, {dy, a}, matmul_attrs(true, false));
  } else if (ta && !tb) {
    da = c.emit(OpKind::MatMul, {b, dy}, matmul_attrs(false, true));
    db = c.emit(OpKind::MatMul, {a, dy}, matmul_attrs(false, false));
  } else {
    da = c.emit(OpKind::MatMul, {b, dy}, matmul_attrs(true, true));
    db = c.emit(OpKind::MatMul, {dy, a}, matmul_attrs(true, true));
  }
  c.set_dx(0, c.reduce_to(da, a->type.shape));
  c.set_dx(1, c.reduce_to(db, b->type.shape));
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

void grad_conv(GradContext& c) {
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
  if (c.x(2)) {
    std::vector<int64_t> axes = {0};
    for (size_t i = 0; i < spatial; ++i) axes.push_back(int64_t(i + 2));
    Attrs r;
    r.set("axes", axes);
    r.set("keepdims", int64_t(0));
    c.set_dx(2, c.emit(OpKind::ReduceSum, {dy}, r));
  }
}

void grad_maxpool(GradContext& c) {
  if (c.node().outputs.size() > 1 && c.node().outputs[1] && c.dy(1))
    throw Error("autodiff: MaxPool indices have no gradient");
  Attrs a = c.node().attrs;
  c.set_dx(0, c.emit(OpKind::MaxPoolGrad, {c.dy(), c.x(0)}, a));
}

void grad_batchnorm(GradContext& c) {
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

void grad_softmax_cross_entropy(GradContext& c) {
  if (c.x(2)) throw Error("autodiff: SoftmaxCrossEntropyLoss with class weights has no gradient rule yet");
  Attrs a;
  a.set("reduction", c.node().attrs.s("reduction", "mean"));
  if (c.node().attrs.has("ignore_index")) a.set("ignore_index", c.node().attrs.i("ignore_index"));
  c.set_dx(0, c.emit(OpKind::SoftmaxCrossEntropyGrad, {c.dy(), c.x(0), c.x(1)}, a));
}

// Reduce{Sum,Mean}: the gradient broadcasts back over the reduced axes (scaled for the mean).
void grad_reduce(GradContext& c, bool mean) {
  const Shape& in = c.x(0)->type.shape;
  std::vector<int64_t> axes = c.node().attrs.ints("axes", {});
  if (axes.empty()) {
    axes.resize(in.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  Shape kept = in;
  int64_t count = 1;
  for (int64_t a : axes) {
    kept[size_t(a)] = 1;
    count *= in[size_t(a)];
  }
  ir::Value* d = c.reshape(c.dy(), kept);
  Attrs e;
  e.set("shape", in);
  d = c.emit(OpKind::Expand, {d}, e);
  if (mean) d = c.emit(OpKind::Mul, {d, c.scalar(d->type.dtype, 1.0 / double(count))});
  c.set_dx(0, d);
}

void grad_reduce_sum(GradContext& c) { grad_reduce(c, false); }
void grad_reduce_mean(GradContext& c) { grad_reduce(c, true); }

void grad_identity(GradContext& c) { c.set_dx(0, c.dy()); }

}  // namespace

GradRule find_grad_rule(OpKind op) {
  switch (op) {
    case OpKind::Add:
      return grad_add;
    case OpKind::Sub:
      return grad_sub;
    case OpKind::Mul:
      return grad_mul;
    case OpKind::Div:
      return grad_div;
    case OpKind::Neg:
      return grad_neg;
    case OpKind::Relu:
      return grad_relu;
    case OpKind::Sigmoid:
      return grad_sigmoid;
    case OpKind::Tanh:
      return grad_tanh;
    case OpKind::Reshape:
      return grad_reshape;
    case OpKind::Identity:
      return grad_identity;
    case OpKind::Transpose:
      return grad_transpose;
    case OpKind::MatMul:
      return grad_matmul;
    case OpKind::Conv:
      return grad_conv;
    case OpKind::MaxPool:
      return grad_maxpool;
    case OpKind::BatchNormalization:
      return grad_batchnorm;
    case OpKind::SoftmaxCrossEntropyLoss:
      return grad_softmax_cross_entropy;
    case OpKind::ReduceSum:
      return grad_reduce_sum;
    case OpKind::ReduceMean:
      return grad_reduce_mean;
    default:
      return nullptr;
  }
}

}  // namespace dlc::passes
