// The optimizer pass: SGD (momentum, dampening, Nesterov), Adam and AdamW with PyTorch's formulas.
#include "passes/optimizer.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "passes/autodiff.h"

namespace dlc::passes {

bool Optimizer::run(ir::Graph& g) {
  const std::string& kind = options_.kind;
  if (kind != "sgd" && kind != "adam" && kind != "adamw")
    throw Error(fmt::format("optimizer: unknown optimizer '{}' (sgd, adam, adamw)", kind));
  for (const char* name : {kLearningRateInput, kStepInput})
    if (g.find_value(name))
      throw Error(
          fmt::format("optimizer: the model already has a value named '{}', which dlc reserves", name));
  ir::Value* lr = g.add_input(kLearningRateInput, TensorType{DType::F32, {}});
  ir::Value* step = g.add_input(kStepInput, TensorType{DType::F32, {}});
  auto zeros_like = [&](ir::Value* p, const char* suffix) {
    return g.add_parameter(g.unique_value_name(p->name + suffix), Tensor(p->type), ir::Role::State);
  };
  int64_t updated = 0;
  const std::vector<ir::Value*> params = g.initializers();
  for (ir::Value* p : params) {
    if (p->role != ir::Role::Parameter) continue;
    ir::Value* grad = g.find_value(gradient_name(p->name));
    if (!grad) continue;
    Attrs a;
    a.set("weight_decay", options_.weight_decay);
    std::string node = p->name + ".update";
    if (kind == "sgd") {
      a.set("momentum", options_.momentum);
      a.set("dampening", options_.dampening);
      a.set("nesterov", int64_t(options_.nesterov));
      ir::Value* vel = zeros_like(p, ".momentum");
      ir::Node* n = g.add_node(
          ir::OpKind::SgdUpdate, {p, grad, vel, lr}, a,
          {g.unique_value_name(p->name + ".next"), g.unique_value_name(vel->name + ".next")}, node);
      g.add_state_update(n->outputs[0], p);
      g.add_state_update(n->outputs[1], vel);
    } else {
      a.set("beta1", options_.beta1);
      a.set("beta2", options_.beta2);
      a.set("eps", options_.eps);
      a.set("decoupled", int64_t(kind == "adamw"));
      ir::Value* m = zeros_like(p, ".exp_avg");
      ir::Value* v = zeros_like(p, ".exp_avg_sq");
      ir::Node* n =
          g.add_node(ir::OpKind::AdamUpdate, {p, grad, m, v, lr, step}, a,
                     {g.unique_value_name(p->name + ".next"), g.unique_value_name(m->name + ".next"),
                      g.unique_value_name(v->name + ".next")},
                     node);
      g.add_state_update(n->outputs[0], p);
      g.add_state_update(n->outputs[1], m);
      g.add_state_update(n->outputs[2], v);
    }
    ++updated;
  }
  if (updated == 0) throw Error("optimizer: no parameter has a gradient (all frozen or unreached)");
  stats_["parameters_updated"] = updated;
  return true;
}

}  // namespace dlc::passes
