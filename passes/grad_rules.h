// Gradient rules: for one forward node, given the gradients of its outputs, emit the nodes that
// compute the gradients of its inputs.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace dlc::passes {

class GradContext {
 public:
  GradContext(ir::Graph& g, const ir::Node& node, std::vector<ir::Value*> output_grads)
      : g_(g), node_(node), dy_(std::move(output_grads)), dx_(node.inputs.size(), nullptr) {}

  const ir::Node& node() const { return node_; }
  /// Input i, or null where absent.
  ir::Value* x(int i) const { return i < int(node_.inputs.size()) ? node_.inputs[i] : nullptr; }
  /// Output i, or null where absent.
  ir::Value* y(int i = 0) const { return i < int(node_.outputs.size()) ? node_.outputs[i] : nullptr; }
  /// Gradient of output i (null: that output is absent or does not reach the loss).
  ir::Value* dy(int i = 0) const { return i < int(dy_.size()) ? dy_[i] : nullptr; }
  void set_dx(int i, ir::Value* v) { dx_[i] = v; }
  const std::vector<ir::Value*>& input_grads() const { return dx_; }

  /// Emits one node named after the forward node; returns its first output.
  ir::Value* emit(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs = {});
  std::vector<ir::Value*> emit_multi(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs, int outputs);
  ir::Value* constant(Tensor value);
  ir::Value* scalar(DType dtype, double v) { return constant(Tensor::from_double(dtype, {v}, {})); }
  /// A tensor of zeros of type `t` (a scalar expanded).
  ir::Value* zeros(const TensorType& t);
  /// Sums `v` over the axes along which it was broadcast from `shape`, then reshapes to it.
  ir::Value* reduce_to(ir::Value* v, const Shape& shape);
  ir::Value* reshape(ir::Value* v, const Shape& shape);
  /// `v` broadcast to `shape` (`v` itself when it has that shape).
  ir::Value* expand(ir::Value* v, const Shape& shape);
  /// `v` converted to `dtype` (`v` itself when it has that dtype, and the `dtype` value v was
  /// widened from exactly when it is such a Cast).
  ir::Value* cast(ir::Value* v, DType dtype);

  // Shorthands for the elementwise ops rules compose (numpy broadcasting).
  ir::Value* add(ir::Value* a, ir::Value* b) { return emit(ir::OpKind::Add, {a, b}); }
  ir::Value* sub(ir::Value* a, ir::Value* b) { return emit(ir::OpKind::Sub, {a, b}); }
  ir::Value* mul(ir::Value* a, ir::Value* b) { return emit(ir::OpKind::Mul, {a, b}); }
  ir::Value* div(ir::Value* a, ir::Value* b) { return emit(ir::OpKind::Div, {a, b}); }
  ir::Value* neg(ir::Value* a) { return emit(ir::OpKind::Neg, {a}); }
  /// `v` * the scalar `k` (of v's dtype).
  ir::Value* scale(ir::Value* v, double k) { return mul(v, scalar(v->type.dtype, k)); }
  /// Where(cond, a, b).
  ir::Value* select(ir::Value* cond, ir::Value* a, ir::Value* b) {
    return emit(ir::OpKind::Where, {cond, a, b});
  }
  /// Where(cond, v, 0).
  ir::Value* keep_where(ir::Value* cond, ir::Value* v) { return select(cond, v, scalar(v->type.dtype, 0.0)); }

 private:
  ir::Graph& g_;
  const ir::Node& node_;
  std::vector<ir::Value*> dy_, dx_;
};

using GradRule = void (*)(GradContext& ctx);
/// The rule of an op, or nullptr if the op has none (autodiff then fails naming the node).
GradRule find_grad_rule(ir::OpKind op);

}  // namespace dlc::passes
