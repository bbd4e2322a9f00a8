// The optimizer pass: SGD (momentum, dampening, Nesterov), Adam, AdamW and RMSprop with PyTorch's
// formulas, after optional gradient accumulation, loss unscaling and global-norm clipping.
#include "passes/optimizer.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "passes/autodiff.h"
#include "passes/clip_grad_norm.h"
#include "passes/grad_accumulation.h"
#include "passes/loss_scaling.h"

namespace dlc::passes {

namespace {

// Adds the update op of one parameter and registers its state updates through `accumulator`.
class UpdateBuilder {
 public:
  // `step` is the fed step input, or with loss scaling the optimizer steps taken (loss_scaling.h).
  UpdateBuilder(ir::Graph& g, const OptimizerOptions& options, GradientAccumulator& accumulator,
                ir::Value* lr, ir::Value* step)
      : g_(g), options_(options), accumulator_(accumulator), lr_(lr), step_(step) {}

  void add(ir::Value* p, ir::Value* grad) {
    Attrs a;
    a.set("weight_decay", options_.weight_decay);
    const std::string& kind = options_.kind;
    if (kind == "sgd") {
      a.set("momentum", options_.momentum);
      a.set("dampening", options_.dampening);
      a.set("nesterov", int64_t(options_.nesterov));
      emit(ir::OpKind::SgdUpdate, p, {p, grad, zeros_like(p, ".momentum"), lr_}, a);
    } else if (kind == "adam" || kind == "adamw") {
      a.set("beta1", options_.beta1);
      a.set("beta2", options_.beta2);
      a.set("eps", options_.eps);
      a.set("decoupled", int64_t(kind == "adamw"));
      emit(ir::OpKind::AdamUpdate, p,
           {p, grad, zeros_like(p, ".exp_avg"), zeros_like(p, ".exp_avg_sq"), lr_, step_}, a);
    } else {
      a.set("alpha", options_.alpha);
      a.set("eps", options_.eps);
      a.set("momentum", options_.momentum);
      a.set("centered", int64_t(options_.centered));
      ir::Value* grad_avg = options_.centered ? zeros_like(p, ".grad_avg") : nullptr;
      ir::Value* buffer = options_.momentum != 0 ? zeros_like(p, ".momentum_buffer") : nullptr;
      emit(ir::OpKind::RmspropUpdate, p, {p, grad, zeros_like(p, ".square_avg"), lr_, grad_avg, buffer}, a);
    }
  }

 private:
  ir::Value* zeros_like(ir::Value* p, const char* suffix) {
    return g_.add_parameter(g_.unique_value_name(p->name + suffix), Tensor(p->type), ir::Role::State);
  }

  // The update op's outputs are the new values of its state operands: the parameter (operand 0),
  // then each operand from index 2 on except lr and step; an absent one gives an absent output.
  // The accumulator's update gate, if any, is its last operand, apply.
  void emit(ir::OpKind op, ir::Value* p, std::vector<ir::Value*> inputs, const Attrs& attrs) {
    std::vector<ir::Value*> updated = {p};
    for (size_t i = 2; i < inputs.size(); ++i)
      if (inputs[i] != lr_ && inputs[i] != step_) updated.push_back(inputs[i]);
    if (ir::Value* gate = accumulator_.update_gate()) inputs.push_back(gate);
    std::vector<std::string> names;
    for (ir::Value* s : updated) names.push_back(s ? g_.unique_value_name(s->name + ".next") : "");
    ir::Node* n = g_.add_node(op, std::move(inputs), attrs, names, p->name + ".update");
    for (size_t i = 0; i < updated.size(); ++i)
      if (updated[i]) accumulator_.update_state(n->outputs[i], updated[i]);
  }

  ir::Graph& g_;
  const OptimizerOptions& options_;
  GradientAccumulator& accumulator_;
  ir::Value *lr_, *step_;
};

}  // namespace

bool Optimizer::run(ir::Graph& g) {
  const std::string& kind = options_.kind;
  if (kind != "sgd" && kind != "adam" && kind != "adamw" && kind != "rmsprop")
    throw Error(fmt::format("optimizer: unknown optimizer '{}' (sgd, adam, adamw, rmsprop)", kind));
  for (const char* name : {kLearningRateInput, kStepInput})
    if (g.find_value(name))
      throw Error(
          fmt::format("optimizer: the model already has a value named '{}', which dlc reserves", name));
  std::vector<ir::Value*> params, grads;
  for (ir::Value* p : g.initializers()) {
    if (p->role != ir::Role::Parameter) continue;
    if (ir::Value* grad = g.find_value(gradient_name(p->name))) {
      params.push_back(p);
      grads.push_back(grad);
    }
  }
  if (params.empty()) throw Error("optimizer: no parameter has a gradient (all frozen or unreached)");

  GradientAccumulator accumulator(g, options_.accumulate, kApplyInput);
  for (size_t i = 0; i < params.size(); ++i) grads[i] = accumulator.accumulate(params[i], grads[i]);
  ir::Value* lr = g.add_input(kLearningRateInput, TensorType{DType::F32, {}});
  ir::Value* step = g.add_input(kStepInput, TensorType{DType::F32, {}});
  if (ir::Value* scale = g.find_value(kLossScale)) {
    UnscaledGradients unscaled = unscale_gradients(g, scale, g.outputs().at(0), grads,
                                                   options_.loss_scale_growth_interval, accumulator);
    grads = std::move(unscaled.grads);
    // The fed step counts iterations; the optimizer's (Adam's bias correction) only applied ones.
    step = g.add_node(ir::OpKind::Sub, {step, unscaled.skipped_steps}, {},
                      {g.unique_value_name("optimizer.step")}, "optimizer.step")
               ->outputs[0];
  }
  if (options_.clip_norm != 0) grads = clip_grad_norm(g, grads, options_.clip_norm);
  UpdateBuilder updates(g, options_, accumulator, lr, step);
  for (size_t i = 0; i < params.size(); ++i) updates.add(params[i], grads[i]);
  stats_["parameters_updated"] = int64_t(params.size());
  return true;
}

}  // namespace dlc::passes
