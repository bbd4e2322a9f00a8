// Finite-difference gradient checks shared by the autodiff tests: a graph is differentiated
// (training-mode, loss, autodiff passes), lowered with the parameter gradients as extra outputs,
// and each checked gradient entry is compared with a central difference of the loss computed by
// the same plan. Every run starts from the initial state, so state updates (running statistics,
// the dropout counter) do not move the loss between runs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "dlc/session.h"
#include "ir/verifier.h"
#include "passes/autodiff.h"
#include "passes/dce.h"
#include "passes/loss.h"
#include "passes/training_mode.h"

namespace dlc::gradcheck {

/// Normal(shift, scale) values as a tensor of the float `dtype`.
inline Tensor random_tensor(const Shape& shape, std::mt19937& rng, double scale = 1.0,
                            DType dtype = DType::F32, double shift = 0.0) {
  std::normal_distribution<double> d(shift, scale);
  std::vector<double> v(size_t(num_elements(shape)));
  for (double& x : v) x = d(rng);
  return Tensor::from_double(dtype, v, shape);
}

/// Uniform values in [lo, hi) as a tensor of the float `dtype`.
inline Tensor uniform_tensor(const Shape& shape, std::mt19937& rng, double lo, double hi,
                             DType dtype = DType::F64) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(size_t(num_elements(shape)));
  for (double& x : v) x = d(rng);
  return Tensor::from_double(dtype, v, shape);
}

/// Makes loss = Σ_k ReduceSum(outputs[k] * w_k), with random constant weights w_k, the graph's
/// only output: a loss whose gradient reaches every element of every output with its own value.
inline void weighted_sum_loss(ir::Graph& g, const std::vector<ir::Value*>& outputs, std::mt19937& rng) {
  Attrs sum_all;
  sum_all.set("keepdims", int64_t(0));
  ir::Value* loss = nullptr;
  for (ir::Value* y : outputs) {
    ir::Value* w = g.add_constant(g.unique_value_name(y->name + ".weight"),
                                  random_tensor(y->type.shape, rng, 1.0, y->type.dtype));
    ir::Value* weighted = g.add_node(ir::OpKind::Mul, {y, w})->outputs[0];
    ir::Value* term = g.add_node(ir::OpKind::ReduceSum, {weighted}, sum_all)->outputs[0];
    loss = loss ? g.add_node(ir::OpKind::Add, {loss, term})->outputs[0] : term;
  }
  g.set_outputs({loss});
}

struct GradientCheck {
  passes::LossOptions loss{"output", "", "label"};
  std::map<std::string, Tensor> inputs = {};  // graph inputs (and the label)
  double tolerance = 1e-6;                    // |analytic - numeric| <= tolerance * (1 + |numeric|)
  double step = 0;                            // finite-difference step; 0: 1e-6 (f64) or 1e-2 (f32)
  int64_t max_entries = 64;                   // entries checked per parameter, evenly spaced
};

/// Differentiates `g` (whose first output becomes the loss) and checks every parameter's gradient
/// against central differences of the loss.
inline void check_gradients(ir::Graph& g, const GradientCheck& check) {
  passes::TrainingMode().run(g);
  passes::Loss(check.loss).run(g);
  passes::Autodiff().run(g);
  std::vector<ir::Value*> outs = {g.outputs()[0]};
  std::vector<ir::Value*> params;
  for (ir::Value* v : g.initializers())
    if (v->role == ir::Role::Parameter) {
      params.push_back(v);
      outs.push_back(g.find_value(passes::gradient_name(v->name)));
      ASSERT_NE(outs.back(), nullptr) << "no gradient for " << v->name;
    }
  g.set_outputs(outs);
  passes::DeadCodeElimination().run(g);
  ir::verify(g);
  auto session = Session::create(codegen::lower_to_plan(g));
  for (const auto& [name, t] : check.inputs) session->set_input(name, t);
  std::map<std::string, Tensor> initial;
  for (const std::string& name : session->state_names()) initial[name] = session->read_state(name);
  auto run_from_initial_state = [&](const std::string& param, const Tensor& value) {
    for (const auto& [name, t] : initial) session->write_state(name, name == param ? value : t);
    session->run();
  };
  run_from_initial_state("", {});
  std::vector<Tensor> grads;
  for (size_t p = 0; p < params.size(); ++p) grads.push_back(session->output(outs[p + 1]->name));
  for (size_t p = 0; p < params.size(); ++p) {
    const std::string& name = params[p]->name;
    const Tensor& value = initial.at(name);
    const DType dtype = value.type.dtype;
    const double h = check.step > 0 ? check.step : dtype == DType::F64 ? 1e-6 : 1e-2;
    const std::vector<double> x = value.as_double(), grad = grads[p].as_double();
    const int64_t n = int64_t(x.size());
    auto loss_at = [&](int64_t i, double xi) {
      std::vector<double> moved = x;
      moved[size_t(i)] = xi;
      run_from_initial_state(name, Tensor::from_double(dtype, moved, value.type.shape));
      return session->output(outs[0]->name).as_double()[0];
    };
    for (int64_t i = 0; i < n; i += std::max<int64_t>(1, n / check.max_entries)) {
      // The step actually taken in the parameter's dtype.
      const double up_x = Tensor::from_double(dtype, {x[size_t(i)] + h}, {}).as_double()[0];
      const double down_x = Tensor::from_double(dtype, {x[size_t(i)] - h}, {}).as_double()[0];
      const double numeric = (loss_at(i, up_x) - loss_at(i, down_x)) / (up_x - down_x);
      EXPECT_NEAR(grad[size_t(i)], numeric, check.tolerance * (1 + std::abs(numeric)))
          << name << "[" << i << "]";
    }
  }
}

}  // namespace dlc::gradcheck
