// Autodiff against finite differences: small graphs (MLP with cross-entropy, conv + batchnorm +
// maxpool with mse) are differentiated, lowered with the parameter gradients as outputs, and each
// gradient entry is compared with a central difference of the loss computed by the same plan.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "codegen/lower.h"
#include "dlc/session.h"
#include "ir/verifier.h"
#include "passes/autodiff.h"
#include "passes/dce.h"
#include "passes/loss.h"
#include "passes/training_mode.h"

namespace dlc {
namespace {

Tensor random_tensor(const Shape& shape, std::mt19937& rng, float scale = 1.f) {
  Tensor t(TensorType{DType::F32, shape});
  std::normal_distribution<float> d(0.f, scale);
  for (int64_t i = 0; i < t.type.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Differentiates `g` (whose first output becomes the loss), then checks every parameter's
// gradient against central differences of the loss. `inputs` feed the graph inputs.
void check_gradients(ir::Graph& g, const passes::LossOptions& loss,
                     const std::map<std::string, Tensor>& inputs, double tolerance) {
  passes::TrainingMode().run(g);
  passes::Loss(loss).run(g);
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
  for (const auto& [name, t] : inputs) session->set_input(name, t);
  session->run();
  auto loss_of = [&] {
    session->run();
    return session->output(outs[0]->name).as_double()[0];
  };
  for (size_t p = 0; p < params.size(); ++p) {
    Tensor grad = session->output(outs[p + 1]->name);
    Tensor value = session->read_state(params[p]->name);
    const int64_t n = value.type.numel();
    for (int64_t i = 0; i < n; i += std::max<int64_t>(1, n / 7)) {
      const float orig = value.data<float>()[i];
      const float h = 1e-2f;
      value.data<float>()[i] = orig + h;
      session->write_state(params[p]->name, value);
      const double up = loss_of();
      value.data<float>()[i] = orig - h;
      session->write_state(params[p]->name, value);
      const double down = loss_of();
      value.data<float>()[i] = orig;
      session->write_state(params[p]->name, value);
      const double numeric = (up - down) / (2 * h);
      EXPECT_NEAR(grad.data<float>()[i], numeric, tolerance * (1 + std::abs(numeric)))
          << params[p]->name << "[" << i << "]";
    }
  }
}

TEST(Autodiff, MlpWithCrossEntropyMatchesFiniteDifferences) {
  std::mt19937 rng(1);
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {4, 5}});
  ir::Value* w1 = g.add_parameter("w1", random_tensor({5, 6}, rng, 0.5f));
  ir::Value* b1 = g.add_parameter("b1", random_tensor({6}, rng, 0.1f));
  ir::Value* w2 = g.add_parameter("w2", random_tensor({3, 6}, rng, 0.5f));
  Attrs tb;
  tb.set("transpose_b", int64_t(1));
  ir::Value* h = g.add_node(ir::OpKind::MatMul, {x, w1})->outputs[0];
  h = g.add_node(ir::OpKind::Add, {h, b1})->outputs[0];
  h = g.add_node(ir::OpKind::Tanh, {h})->outputs[0];
  ir::Value* logits = g.add_node(ir::OpKind::MatMul, {h, w2}, tb)->outputs[0];
  g.add_output(logits);
  Tensor labels = Tensor::from_int64({0, 2, 1, 2}, {4});
  check_gradients(g, {"cross_entropy", "", "label"}, {{"x", random_tensor({4, 5}, rng)}, {"label", labels}},
                  2e-2);
}

TEST(Autodiff, ConvBatchNormPoolWithMseMatchesFiniteDifferences) {
  std::mt19937 rng(2);
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 2, 6, 6}});
  ir::Value* w = g.add_parameter("w", random_tensor({3, 2, 3, 3}, rng, 0.4f));
  ir::Value* b = g.add_parameter("b", random_tensor({3}, rng, 0.1f));
  ir::Value* scale = g.add_parameter("scale", random_tensor({3}, rng, 0.3f));
  ir::Value* shift = g.add_parameter("shift", random_tensor({3}, rng, 0.1f));
  ir::Value* mean = g.add_parameter("mean", Tensor(TensorType{DType::F32, {3}}));
  Tensor ones(TensorType{DType::F32, {3}});
  for (int i = 0; i < 3; ++i) ones.data<float>()[i] = 1.f;
  ir::Value* var = g.add_parameter("var", ones);
  Attrs conv;
  conv.set("kernel_shape", Shape{3, 3});
  conv.set("pads", Shape{1, 1, 1, 1});
  conv.set("strides", Shape{1, 1});
  ir::Value* y = g.add_node(ir::OpKind::Conv, {x, w, b}, conv)->outputs[0];
  y = g.add_node(ir::OpKind::BatchNormalization, {y, scale, shift, mean, var})->outputs[0];
  y = g.add_node(ir::OpKind::Relu, {y})->outputs[0];
  Attrs pool;
  pool.set("kernel_shape", Shape{2, 2});
  pool.set("strides", Shape{2, 2});
  y = g.add_node(ir::OpKind::MaxPool, {y}, pool)->outputs[0];
  g.add_output(y);
  check_gradients(g, {"mse", "", "label"},
                  {{"x", random_tensor({2, 2, 6, 6}, rng)}, {"label", random_tensor({2, 3, 3, 3}, rng)}},
                  3e-2);
}

}  // namespace
}  // namespace dlc
