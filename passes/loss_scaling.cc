// Dynamic loss scaling: the scale state, unscaling, the all-finite check and the scale update.
#include "passes/loss_scaling.h"

#include <fmt/format.h>

#include <cmath>

#include "dlc/error.h"
#include "passes/grad_accumulation.h"

namespace dlc::passes {

ir::Value* add_loss_scale(ir::Graph& g, double initial) {
  if (!(initial > 0) || !std::isfinite(initial))
    throw Error(fmt::format("--loss-scale must be positive and finite, got {}", initial));
  for (const char* name : {kLossScale, kLossScaleGoodSteps, kLossScaleSkippedSteps})
    if (g.find_value(name))
      throw Error(
          fmt::format("mixed-precision: the model already has a value named '{}', which dlc reserves", name));
  return g.add_parameter(kLossScale, Tensor::scalar_f32(float(initial)), ir::Role::State);
}

UnscaledGradients unscale_gradients(ir::Graph& g, ir::Value* scale, ir::Value* loss,
                                    const std::vector<ir::Value*>& grads, int64_t growth_interval,
                                    GradientAccumulator& accumulator) {
  if (growth_interval < 1)
    throw Error(fmt::format("--loss-scale-growth-interval must be at least 1, got {}", growth_interval));
  auto op = [&](ir::OpKind kind, std::vector<ir::Value*> inputs, const std::string& name, Attrs attrs = {}) {
    return g.add_node(kind, std::move(inputs), std::move(attrs), {g.unique_value_name(name)}, "loss_scaling")
        ->outputs[0];
  };
  auto constant = [&](const char* name, double v) {
    return g.add_constant(g.unique_value_name(name), Tensor::scalar_f32(float(v)));
  };
  if (grads.empty()) return {grads, nullptr};
  ir::Value* zero = constant("loss_scale.zero", 0.0);
  ir::Value* one = constant("loss_scale.one", 1.0);
  ir::Value* inverse = op(ir::OpKind::Reciprocal, {scale}, "loss_scale.inverse");
  // x * 0 is 0 for a finite x and NaN for inf or NaN, so the sum of those is 0 exactly when
  // every element is finite.
  Attrs all_axes;
  all_axes.set("keepdims", int64_t(0));
  auto nonfinite = [&](ir::Value* v, const std::string& name) {
    return op(ir::OpKind::ReduceSum, {op(ir::OpKind::Mul, {v, zero}, name + ".times_zero")},
              name + ".nonfinite", all_axes);
  };
  // The loss of every micro-batch: an overflowing forward skips the step even where the
  // gradients came out finite.
  ir::Value* nonfinite_sum = accumulator.accumulate("loss_scale.loss", nonfinite(loss, loss->name));
  UnscaledGradients out;
  for (ir::Value* grad : grads) {
    ir::Value* u = op(ir::OpKind::Mul, {grad, inverse}, grad->name + ".unscaled");
    nonfinite_sum = op(ir::OpKind::Add, {nonfinite_sum, nonfinite(u, grad->name)}, "loss_scale.nonfinite");
    out.grads.push_back(u);
  }
  ir::Value* finite = op(ir::OpKind::Equal, {nonfinite_sum, zero}, "loss_scale.all_finite");
  accumulator.skip_unless(finite);

  // A skipped step is no optimizer step (GradScaler does not call optimizer.step()).
  out.skipped_steps = g.add_parameter(kLossScaleSkippedSteps, Tensor::scalar_f32(0.f), ir::Role::State);
  ir::Value* skipped_next = op(ir::OpKind::Add, {out.skipped_steps, one}, "loss_scale.skipped_next");
  accumulator.update_state_every_step(
      op(ir::OpKind::Where, {finite, out.skipped_steps, skipped_next}, "loss_scale.skipped_steps_next"),
      out.skipped_steps);

  ir::Value* good = g.add_parameter(kLossScaleGoodSteps, Tensor::scalar_f32(0.f), ir::Role::State);
  ir::Value* good_next = op(ir::OpKind::Add, {good, one}, "loss_scale.good_next");
  ir::Value* grow =
      op(ir::OpKind::GreaterOrEqual,
         {good_next, constant("loss_scale.growth_interval", double(growth_interval))}, "loss_scale.grow");
  ir::Value* grown =
      op(ir::OpKind::Mul, {scale, constant("loss_scale.growth_factor", 2.0)}, "loss_scale.grown");
  ir::Value* backed_off =
      op(ir::OpKind::Mul, {scale, constant("loss_scale.backoff_factor", 0.5)}, "loss_scale.backed_off");
  ir::Value* scale_if_finite = op(ir::OpKind::Where, {grow, grown, scale}, "loss_scale.if_finite");
  ir::Value* good_if_finite = op(ir::OpKind::Where, {grow, zero, good_next}, "loss_scale.good_if_finite");
  accumulator.update_state_every_step(
      op(ir::OpKind::Where, {finite, scale_if_finite, backed_off}, "loss_scale.next"), scale);
  accumulator.update_state_every_step(
      op(ir::OpKind::Where, {finite, good_if_finite, zero}, "loss_scale.good_steps_next"), good);
  return out;
}

}  // namespace dlc::passes
