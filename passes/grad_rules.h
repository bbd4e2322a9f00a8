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
  ir::Value* y(int i = 0) const { return node_.outputs[i]; }
  /// Gradient of output i (null: that output does not reach the loss).
  ir::Value* dy(int i = 0) const { return dy_[i]; }
  void set_dx(int i, ir::Value* v) { dx_[i] = v; }
  const std::vector<ir::Value*>& input_grads() const { return dx_; }

  /// Emits one node named after the forward node; returns its first output.
  ir::Value* emit(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs = {});
  std::vector<ir::Value*> emit_multi(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs, int outputs);
  ir::Value* scalar(DType dtype, double v);
  /// Sums `v` over the axes along which it was broadcast from `shape`, then reshapes to it.
  ir::Value* reduce_to(ir::Value* v, const Shape& shape);
  ir::Value* reshape(ir::Value* v, const Shape& shape);

 private:
  ir::Graph& g_;
  const ir::Node& node_;
  std::vector<ir::Value*> dy_, dx_;
};

using GradRule = void (*)(GradContext& ctx);
/// The rule of an op, or nullptr if the op has none (autodiff then fails naming the node).
GradRule find_grad_rule(ir::OpKind op);

}  // namespace dlc::passes
