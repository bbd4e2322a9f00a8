// Norm-family CPU kernels: the Philox4x32-10 known answers (Random123's KAT vectors),
// hand-computed LayerNormalization and SoftmaxCrossEntropyLoss results, and the loss and its
// gradient against the Softmax and LogSoftmax kernels they share their softmax with.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/philox.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

TEST(Philox, KnownAnswers) {
  rng::Philox4x32Block zero = rng::philox4x32_10({{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zero.v[0], 0x6627e8d5u);
  EXPECT_EQ(zero.v[1], 0xe169c58du);
  EXPECT_EQ(zero.v[2], 0xbc57ac4cu);
  EXPECT_EQ(zero.v[3], 0x9b00dbd8u);
  rng::Philox4x32Block ones =
      rng::philox4x32_10({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu);
  EXPECT_EQ(ones.v[0], 0x408f276du);
  EXPECT_EQ(ones.v[1], 0x41c83b0eu);
  EXPECT_EQ(ones.v[2], 0xa20bc7c6u);
  EXPECT_EQ(ones.v[3], 0x6d5451fdu);
}

TEST(Philox, UniformStreamLanes) {
  // Element i is lane i % 4 of block i / 4; values lie in [0, 1).
  rng::Philox4x32Block b = rng::philox_block(7, 2);
  for (uint64_t lane = 0; lane < 4; ++lane) {
    float u = rng::philox_uniform(7, 8 + lane);
    EXPECT_EQ(u, rng::uniform_from_bits(b.v[lane]));
    EXPECT_GE(u, 0.0f);
    EXPECT_LT(u, 1.0f);
  }
}

using test::view;

TEST(NormKernels, LayerNormalizationByHand) {
  std::vector<float> x = {1, 2, 3, 4, 0, 0, 4, 4}, scale = {1, 1, 2, 2}, bias = {0, 0, 0, 1};
  std::vector<float> y(8), mean(2), inv_std(2);
  Attrs attrs;
  attrs.set("axis", int64_t(-1));
  attrs.set("epsilon", 0.0);
  KernelContext ctx =
      test::kernel_context(attrs,
                           {view(DType::F32, {2, 4}, x.data()), view(DType::F32, {4}, scale.data()),
                            view(DType::F32, {4}, bias.data())},
                           {view(DType::F32, {2, 4}, y.data()), view(DType::F32, {2, 1}, mean.data()),
                            view(DType::F32, {2, 1}, inv_std.data())},
                           "LayerNormalization");
  kernel_LayerNormalization(ctx);
  // Row 0: mean 2.5, variance 1.25; row 1: mean 2, variance 4.
  const float r = 1.0f / std::sqrt(1.25f);
  const std::vector<float> want = {-1.5f * r, -0.5f * r, 2 * 0.5f * r, 2 * 1.5f * r + 1, -1, -1, 2, 3};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << i;
  EXPECT_FLOAT_EQ(mean[0], 2.5f);
  EXPECT_FLOAT_EQ(mean[1], 2.0f);
  EXPECT_NEAR(inv_std[0], r, 1e-6);
  EXPECT_FLOAT_EQ(inv_std[1], 0.5f);
}

TEST(NormKernels, SoftmaxCrossEntropyByHand) {
  // Row 0: uniform scores, target 1 (weight 2); row 1: softmax (1/8, 2/8, 5/8), target 2
  // (weight 3); row 2: ignored. Mean = sum(w * loss) / sum(w of non-ignored targets).
  std::vector<float> x = {0, 0, 0, 0, std::log(2.0f), std::log(5.0f), 5, 6, 7}, w = {1, 2, 3};
  std::vector<int64_t> target = {1, 2, -1};
  float loss = 0;
  std::vector<float> log_prob(9);
  Attrs attrs;
  attrs.set("reduction", std::string("mean"));
  attrs.set("ignore_index", int64_t(-1));
  KernelContext ctx = test::kernel_context(
      attrs,
      {view(DType::F32, {3, 3}, x.data()), view(DType::I64, {3}, target.data()),
       view(DType::F32, {3}, w.data())},
      {view(DType::F32, {}, &loss), view(DType::F32, {3, 3}, log_prob.data())}, "SoftmaxCrossEntropyLoss");
  kernel_SoftmaxCrossEntropyLoss(ctx);
  EXPECT_NEAR(loss, (2 * std::log(3.0) + 3 * -std::log(5.0 / 8)) / 5, 1e-6);
  EXPECT_NEAR(log_prob[0], -std::log(3.0), 1e-6);
  EXPECT_NEAR(log_prob[3], std::log(1.0 / 8), 1e-6);
  EXPECT_NEAR(log_prob[4], std::log(2.0 / 8), 1e-6);
  EXPECT_NEAR(log_prob[5], std::log(5.0 / 8), 1e-6);
}

// The loss's log-probabilities are LogSoftmax's over axis 1, bit for bit, and its gradient is
// g * (Softmax - one_hot(label)) with g = 1 / (labels counted), 0 where the label is ignored:
// logits [N, C] (rows) and [N, C, D] (a class axis in the middle).
TEST(NormKernels, SoftmaxCrossEntropyAndItsGradientUseTheSoftmaxKernels) {
  for (const Shape& dims : {Shape{6, 10}, Shape{4, 7, 3}}) {
    const int64_t n = dims[0], c = dims[1], d = dims.size() == 3 ? dims[2] : 1, positions = n * d;
    std::vector<float> x = test::random_values(n * c * d, 11);
    for (float& v : x) v *= 8;
    std::vector<int64_t> label(static_cast<size_t>(positions));
    for (int64_t p = 0; p < positions; ++p) label[size_t(p)] = p == 1 ? -100 : (p * 3) % c;
    const Shape label_dims = d == 1 ? Shape{n} : Shape{n, d};
    Attrs attrs;
    attrs.set("reduction", std::string("mean"));
    attrs.set("ignore_index", int64_t(-100));
    float loss = 0, dloss = 1;
    std::vector<float> log_prob(x.size()), want_log_prob(x.size()), prob(x.size()), dx(x.size());
    KernelContext sce =
        test::kernel_context(attrs, {view(x, dims), view(DType::I64, label_dims, label.data())},
                             {view(DType::F32, {}, &loss), view(log_prob, dims)}, "SoftmaxCrossEntropyLoss");
    kernel_SoftmaxCrossEntropyLoss(sce);
    Attrs axis1;
    axis1.set("axis", int64_t(1));
    KernelContext log_softmax = test::kernel_context(axis1, {view(x, dims)}, {view(want_log_prob, dims)});
    kernel_LogSoftmax(log_softmax);
    KernelContext softmax = test::kernel_context(axis1, {view(x, dims)}, {view(prob, dims)});
    kernel_Softmax(softmax);
    KernelContext grad = test::kernel_context(
        attrs, {view(DType::F32, {}, &dloss), view(x, dims), view(DType::I64, label_dims, label.data())},
        {view(dx, dims)}, "SoftmaxCrossEntropyGrad");
    kernel_SoftmaxCrossEntropyGrad(grad);
    double want_loss = 0;
    const float g = 1.f / float(positions - 1);
    for (int64_t p = 0; p < positions; ++p) {
      const int64_t t = label[size_t(p)];
      for (int64_t k = 0; k < c; ++k) {
        const size_t e = size_t(((p / d) * c + k) * d + p % d);
        EXPECT_EQ(log_prob[e], want_log_prob[e]) << shape_str(dims) << " " << e;
        EXPECT_EQ(dx[e], t == -100 ? 0.f : g * (prob[e] - (k == t ? 1.f : 0.f)))
            << shape_str(dims) << " " << e;
        if (k == t) want_loss -= double(log_prob[e]);
      }
    }
    EXPECT_NEAR(loss, want_loss / double(positions - 1), 1e-6) << shape_str(dims);
  }
}

// A label outside [0, C) that is not the ignored one is an error of the gradient too.
TEST(NormKernels, SoftmaxCrossEntropyGradRefusesALabelOutsideTheClasses) {
  std::vector<float> x(6), dx(6);
  std::vector<int64_t> label = {0, 3};
  float dloss = 1;
  Attrs attrs;
  KernelContext grad = test::kernel_context(
      attrs, {view(DType::F32, {}, &dloss), view(x, {2, 3}), view(DType::I64, {2}, label.data())},
      {view(dx, {2, 3})}, "SoftmaxCrossEntropyGrad");
  EXPECT_THROW(
      {
        try {
          kernel_SoftmaxCrossEntropyGrad(grad);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("label 3 is outside [0, 3)"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

}  // namespace
}  // namespace dlc::cpu
