// Autodiff against finite differences on small models (MLP with cross-entropy, conv + batchnorm +
// maxpool with mse; gradient_check.h), and autodiff's errors. Each op's rule has its own check in
// grad_rules_test.cc.
#include <gtest/gtest.h>

#include <random>

#include "dlc/error.h"
#include "tests/unit/gradient_check.h"

namespace dlc {
namespace {

using gradcheck::check_gradients;
using gradcheck::random_tensor;

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
  check_gradients(g, {.loss = {"cross_entropy", "", "label"},
                      .inputs = {{"x", random_tensor({4, 5}, rng)}, {"label", labels}},
                      .tolerance = 2e-2});
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
  check_gradients(
      g, {.loss = {"mse", "", "label"},
          .inputs = {{"x", random_tensor({2, 2, 6, 6}, rng)}, {"label", random_tensor({2, 3, 3, 3}, rng)}},
          .tolerance = 3e-2,
          .step = 1e-4,  // small: a ReLU/max-pool kink lies within 1e-3 of scale[0]
          .max_entries = 7});
}

TEST(Autodiff, OpWithoutRuleIsAnErrorNamingTheNodeAndOp) {
  ir::Graph g;
  ir::Value* w = g.add_parameter("w", Tensor::from_double(DType::F32, {1, 2, 3}, {3}));
  ir::Value* i = g.add_constant("i", Tensor::from_int64({2, 0}, {2, 1}));
  ir::Value* y = g.add_node(ir::OpKind::GatherND, {w, i}, {}, {""}, "my_gather")->outputs[0];
  g.add_output(g.add_node(ir::OpKind::ReduceSum, {y})->outputs[0]);
  try {
    passes::Autodiff().run(g);
    FAIL() << "autodiff accepted an op without a gradient rule";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'my_gather'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(GatherND)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlc
