// Reverse-mode autodiff over the schedule.
#include "passes/autodiff.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "dlc/error.h"
#include "passes/grad_rules.h"
#include "passes/loss_scaling.h"

namespace dlc::passes {

std::string gradient_name(const std::string& param) { return param + "@grad"; }

std::vector<ir::Value*> backpropagate(ir::Graph& g, ir::Value* y, ir::Value* seed,
                                      const std::vector<ir::Value*>& wrt, int64_t* rules) {
  const std::vector<ir::Node*> forward = g.nodes();
  // Which values lead to one of `wrt`: only their gradients are worth computing.
  std::set<const ir::Value*> needs_grad(wrt.begin(), wrt.end());
  for (ir::Node* n : forward) {
    bool any = false;
    for (ir::Value* in : n->inputs) any = any || (in && needs_grad.count(in));
    if (any)
      for (ir::Value* out : n->outputs)
        if (out) needs_grad.insert(out);
  }
  std::map<const ir::Value*, ir::Value*> grad = {{y, seed}};
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    ir::Node* n = *it;
    std::vector<ir::Value*> dys;
    bool reached = false;
    for (ir::Value* out : n->outputs) {
      auto gi = out ? grad.find(out) : grad.end();
      dys.push_back(gi == grad.end() ? nullptr : gi->second);
      reached = reached || gi != grad.end();
    }
    bool wanted = false;
    for (ir::Value* in : n->inputs) wanted = wanted || (in && needs_grad.count(in));
    if (!reached || !wanted) continue;
    GradRule rule = find_grad_rule(n->op);
    if (!rule)
      throw Error(fmt::format("autodiff: node '{}' ({}) has no gradient rule", n->name, ir::op_name(n->op)));
    GradContext ctx(g, *n, dys);
    rule(ctx);
    if (rules) ++*rules;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      ir::Value* in = n->inputs[i];
      ir::Value* dx = ctx.input_grads()[i];
      if (!in || !dx || !needs_grad.count(in)) continue;
      if (dx->type != in->type)
        throw Error(fmt::format("autodiff: rule of {} gave {} for input {} of node '{}' ({})",
                                ir::op_name(n->op), dx->type.str(), in->type.str(), n->name, i));
      auto [pos, inserted] = grad.insert({in, dx});
      if (!inserted)
        pos->second =
            g.add_node(ir::OpKind::Add, {pos->second, dx}, {}, {""}, n->name + ".grad_sum")->outputs[0];
    }
  }
  std::vector<ir::Value*> out;
  for (ir::Value* x : wrt) {
    auto gi = grad.find(x);
    out.push_back(gi == grad.end() ? nullptr : gi->second);
  }
  return out;
}

bool Autodiff::run(ir::Graph& g) {
  if (g.outputs().empty()) throw Error("autodiff: the graph has no loss output");
  ir::Value* loss = g.outputs()[0];
  if (loss->type.numel() != 1 || !is_floating(loss->type.dtype))
    throw Error(
        fmt::format("autodiff: the loss '{}' must be a float scalar, got {}", loss->name, loss->type.str()));
  std::regex freeze(freeze_.empty() ? "$^" : freeze_);
  std::vector<ir::Value*> params;
  for (ir::Value* v : g.initializers())
    if (v->role == ir::Role::Parameter && !std::regex_search(v->name, freeze)) params.push_back(v);
  std::set<const ir::Value*> forward_values;
  for (ir::Node* n : g.nodes()) forward_values.insert(n->outputs.begin(), n->outputs.end());
  // With a loss scale (fp16, loss_scaling.h) the backward starts from the scale instead of 1.
  ir::Value* seed = g.find_value(kLossScale);
  if (seed && seed->type.dtype != loss->type.dtype)
    throw Error(
        fmt::format("autodiff: loss scaling needs an f32 loss; '{}' is {}", loss->name, loss->type.str()));
  if (seed && seed->type != loss->type) {
    Attrs shape;
    shape.set("shape", loss->type.shape);
    seed = g.add_node(ir::OpKind::Reshape, {seed}, shape, {g.unique_value_name(gradient_name(loss->name))})
               ->outputs[0];
  }
  if (!seed)
    seed = g.add_constant(g.unique_value_name(gradient_name(loss->name)),
                          Tensor::from_double(loss->type.dtype, {1.0}, loss->type.shape));
  int64_t rules = 0;
  const std::vector<ir::Value*> grads = backpropagate(g, loss, seed, params, &rules);
  int64_t with_gradient = 0;
  for (size_t p = 0; p < params.size(); ++p) {
    ir::Value* dv = grads[p];
    if (!dv) continue;
    // Name the gradient after its parameter; copy only where the value is shared (a forward
    // value, a constant, or already another parameter's gradient).
    const bool shared = !dv->producer || dv->role == ir::Role::Gradient || forward_values.count(dv);
    if (shared)
      dv = g.add_node(ir::OpKind::Identity, {dv}, {}, {gradient_name(params[p]->name)},
                      params[p]->name + ".grad")
               ->outputs[0];
    else
      g.rename_value(dv, gradient_name(params[p]->name));
    dv->role = ir::Role::Gradient;
    ++with_gradient;
  }
  stats_["rules_applied"] = rules;
  stats_["parameters_with_gradients"] = with_gradient;
  return rules > 0;
}

}  // namespace dlc::passes
