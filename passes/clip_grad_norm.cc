// Global-norm gradient clipping.
#include "passes/clip_grad_norm.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::passes {

std::vector<ir::Value*> clip_grad_norm(ir::Graph& g, const std::vector<ir::Value*>& grads, double max_norm) {
  if (!(max_norm > 0)) throw Error(fmt::format("--clip-norm must be positive, got {}", max_norm));
  auto op = [&](ir::OpKind kind, std::vector<ir::Value*> inputs, const std::string& name, Attrs attrs = {}) {
    return g
        .add_node(kind, std::move(inputs), std::move(attrs), {g.unique_value_name(name)}, "clip_grad_norm")
        ->outputs[0];
  };
  auto constant = [&](const char* name, double v) {
    return g.add_constant(g.unique_value_name(name), Tensor::scalar_f32(float(v)));
  };
  Attrs all_axes;
  all_axes.set("keepdims", int64_t(0));
  ir::Value* sum_of_squares = nullptr;
  for (ir::Value* grad : grads) {
    ir::Value* norm = op(ir::OpKind::ReduceL2, {grad}, grad->name + ".norm", all_axes);
    ir::Value* square = op(ir::OpKind::Mul, {norm, norm}, grad->name + ".norm_squared");
    sum_of_squares =
        sum_of_squares ? op(ir::OpKind::Add, {sum_of_squares, square}, "clip.sum_of_squares") : square;
  }
  if (!sum_of_squares) return grads;
  ir::Value* total_norm = op(ir::OpKind::Sqrt, {sum_of_squares}, "clip.total_norm");
  ir::Value* denominator =
      op(ir::OpKind::Add, {total_norm, constant("clip.epsilon", 1e-6)}, "clip.denominator");
  ir::Value* coef = op(ir::OpKind::Div, {constant("clip.max_norm", max_norm), denominator}, "clip.coef");
  ir::Value* clamped = op(ir::OpKind::Min, {coef, constant("clip.one", 1.0)}, "clip.coef_clamped");
  std::vector<ir::Value*> clipped;
  for (ir::Value* grad : grads)
    clipped.push_back(op(ir::OpKind::Mul, {grad, clamped}, grad->name + ".clipped"));
  return clipped;
}

}  // namespace dlc::passes
