// BatchNormalization's running variance: ONNX's training mode updates it with the biased batch
// variance, dlc's own training (the training-mode pass) with PyTorch's unbiased one.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ir/graph.h"
#include "passes/training_mode.h"
#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc {
namespace {

// One training-mode step of the CPU kernel on x [2, 2, 2] (channel 0: 1, 2, 3, 6; channel 1: all
// 5) from running mean 0 and variance 1 with ONNX momentum 0.9; returns y, mean', var'.
struct BatchNormStep {
  std::vector<float> y = std::vector<float>(8), mean = {0, 0}, var = {0, 0};
};

BatchNormStep run_batch_norm(bool unbiased) {
  std::vector<float> x = {1, 2, 5, 5, 3, 6, 5, 5}, scale = {1, 1}, bias = {0, 0}, mean = {0, 0}, var = {1, 1};
  BatchNormStep out;
  Attrs attrs;
  attrs.set("epsilon", 1e-5);
  attrs.set("momentum", 0.9);
  attrs.set("training_mode", int64_t(1));
  if (unbiased) attrs.set("running_var_unbiased", int64_t(1));
  using cpu::test::view;
  cpu::KernelContext ctx = cpu::test::kernel_context(
      attrs, {view(x, {2, 2, 2}), view(scale, {2}), view(bias, {2}), view(mean, {2}), view(var, {2})},
      {view(out.y, {2, 2, 2}), view(out.mean, {2}), view(out.var, {2})}, "BatchNormalization");
  cpu::kernel_BatchNormalization(ctx);
  return out;
}

TEST(BatchNormRunningVar, OnnxTrainingModeUsesTheBiasedVariance) {
  // Channel 0: mean 3, biased variance (4 + 1 + 0 + 9) / 4 = 3.5.
  BatchNormStep s = run_batch_norm(false);
  EXPECT_FLOAT_EQ(s.mean[0], 0.1f * 3);
  EXPECT_FLOAT_EQ(s.var[0], 0.9f + 0.1f * 3.5f);
  EXPECT_FLOAT_EQ(s.var[1], 0.9f);  // a constant channel has variance 0
}

TEST(BatchNormRunningVar, UnbiasedUpdateMatchesPyTorch) {
  // PyTorch: running_var = 0.9 * 1 + 0.1 * 14 / 3 (the sum of squares over n - 1 = 3).
  BatchNormStep s = run_batch_norm(true);
  EXPECT_FLOAT_EQ(s.mean[0], 0.1f * 3);
  EXPECT_NEAR(s.var[0], 0.9 + 0.1 * 14.0 / 3.0, 1e-6);
  EXPECT_FLOAT_EQ(s.var[1], 0.9f);
  // The normalization itself uses the biased variance either way, like PyTorch.
  EXPECT_NEAR(s.y[0], (1 - 3) / std::sqrt(3.5 + 1e-5), 1e-6);
  EXPECT_EQ(s.y, run_batch_norm(false).y);
}

TEST(BatchNormRunningVar, TrainingModePassAsksForTheUnbiasedUpdate) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 3, 4}});
  std::vector<ir::Value*> bn_inputs = {x};
  for (const char* name : {"scale", "bias", "mean", "var"})
    bn_inputs.push_back(g.add_parameter(name, Tensor(TensorType{DType::F32, {3}})));
  Attrs inference;
  inference.set("training_mode", int64_t(0));
  g.add_output(g.add_node(ir::OpKind::BatchNormalization, bn_inputs, inference)->outputs[0]);

  passes::TrainingMode pass;
  EXPECT_TRUE(pass.run(g));
  int found = 0;
  for (const ir::Node* n : g.nodes())
    if (n->op == ir::OpKind::BatchNormalization) {
      ++found;
      EXPECT_EQ(n->attrs.i("training_mode", 0), 1);
      EXPECT_EQ(n->attrs.i("running_var_unbiased", 0), 1);
    }
  EXPECT_EQ(found, 1);
}

}  // namespace
}  // namespace dlc
