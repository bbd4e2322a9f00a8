// The RMSprop update kernel against torch.optim.RMSprop's algorithm: one step worked out by
// hand, and three steps of the centered variant with momentum and weight decay against values
// PyTorch 2 printed for the same inputs. And every update kernel with a 16-bit gradient of f32
// parameters (a folded Cast, passes/optimizer_fusion.h) against the same update of the gradient
// cast to f32, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dlc/half.h"

#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

using test::view;

// Operand buffers of one parameter of four elements; absent ones stay empty.
struct RmspropState {
  std::vector<float> param, square_avg = std::vector<float>(4), grad_avg, momentum_buffer;

  explicit RmspropState(std::vector<float> initial) : param(std::move(initial)) {}

  void step(const Attrs& attrs, std::vector<float> grad, float lr) {
    std::vector<float> p_out(4), sq_out(4), ga_out(grad_avg.size()), buf_out(momentum_buffer.size());
    auto optional_view = [](std::vector<float>& v) { return v.empty() ? TensorView{} : view(v, {4}); };
    KernelContext ctx = test::kernel_context(
        attrs,
        {view(param, {4}), view(grad, {4}), view(square_avg, {4}), view(DType::F32, {}, &lr),
         optional_view(grad_avg), optional_view(momentum_buffer)},
        {view(p_out, {4}), view(sq_out, {4}), optional_view(ga_out), optional_view(buf_out)},
        "RmspropUpdate");
    kernel_RmspropUpdate(ctx);
    param = p_out;
    square_avg = sq_out;
    grad_avg = ga_out;
    momentum_buffer = buf_out;
  }
};

void expect_near(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2e-6 * (1 + std::abs(want[i]))) << what << i;
}

TEST(RmspropKernel, OneStepByHand) {
  // PyTorch's defaults: alpha 0.99, eps 1e-8. From zero state, square_avg = 0.01 g², so
  // g / (sqrt(square_avg) + eps) = sign(g) / 0.1 (up to eps) and p' = p - lr * 10 sign(g).
  RmspropState s({0.5f, -1.f, 2.f, 0.25f});
  Attrs attrs;
  s.step(attrs, {0.1f, -0.2f, 0.3f, -0.4f}, 0.01f);
  expect_near(s.param, {0.4f, -0.9f, 1.9f, 0.35f}, "param");
  expect_near(s.square_avg, {1e-4f, 4e-4f, 9e-4f, 16e-4f}, "square_avg");
}

TEST(RmspropKernel, CenteredMomentumWeightDecayMatchesPyTorch) {
  // torch.optim.RMSprop([p], lr=0.05, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.8,
  // centered=True), p = [0.5, -1, 2, 0.25], three steps with the gradients below.
  RmspropState s({0.5f, -1.f, 2.f, 0.25f});
  s.grad_avg.assign(4, 0.f);
  s.momentum_buffer.assign(4, 0.f);
  Attrs attrs;
  attrs.set("alpha", 0.9);
  attrs.set("eps", 1e-6);
  attrs.set("weight_decay", 0.1);
  attrs.set("momentum", 0.8);
  attrs.set("centered", int64_t(1));
  s.step(attrs, {0.1f, -0.2f, 0.3f, -0.4f}, 0.05f);
  expect_near(s.param, {0.33333703875541687f, -0.8333351612091064f, 1.8333344459533691f, 0.4166651964187622f},
              "param after step 1");
  s.step(attrs, {0.5f, 0.5f, -0.25f, 0.f}, 0.05f);
  expect_near(s.param, {0.03463677316904068f, -0.831120491027832f, 1.7227481603622437f, 0.5309434533119202f},
              "param after step 2");
  s.step(attrs, {-1.f, 0.75f, 0.125f, 2.f}, 0.05f);
  expect_near(s.param, {-0.06348832696676254f, -0.964348316192627f, 1.54094660282135f, 0.4602854251861572f},
              "param after step 3");
  expect_near(s.square_avg,
              {0.1267309933900833f, 0.06738893687725067f, 0.029487228021025658f, 0.4330665171146393f},
              "square_avg");
  expect_near(s.grad_avg,
              {-0.03950360044836998f, 0.07988877594470978f, 0.06422749161720276f, 0.17868442833423615f},
              "grad_avg");
  expect_near(s.momentum_buffer,
              {1.9625020027160645f, 2.6645565032958984f, 3.63603138923645f, 1.4131604433059692f},
              "momentum_buffer");
}

// One update of 64 elements from `param`, moments or velocity at `state`, with a gradient given
// as bf16 (`half` true) or as its f32 value; returns every result's floats.
std::vector<std::vector<float>> update_with(const char* op, KernelFn kernel, const std::vector<float>& grad,
                                            bool half) {
  const int64_t n = 64;
  std::vector<float> param = test::random_values(n, 1), s0 = test::random_values(n, 2), s1(n, 0.01f);
  for (float& x : s0) x = std::abs(x);  // RMSprop's square average (and the rest) non-negative
  std::vector<BFloat16> grad_half(grad.begin(), grad.end());
  std::vector<float> grad_f32(grad_half.begin(), grad_half.end());
  float lr = 0.01f, step = 3.f;
  const TensorView g = half ? view(DType::BF16, {n}, grad_half.data()) : view(grad_f32, {n});
  std::vector<std::vector<float>> outs(3, std::vector<float>(size_t(n)));
  std::vector<TensorView> inputs = {view(param, {n}), g, view(s0, {n})},
                          outputs = {view(outs[0], {n}), view(outs[1], {n})};
  const std::string name = op;
  if (name == "AdamUpdate") {
    inputs.push_back(view(s1, {n}));
    outputs.push_back(view(outs[2], {n}));
  }
  inputs.push_back(view(DType::F32, {}, &lr));
  if (name == "AdamUpdate") inputs.push_back(view(DType::F32, {}, &step));
  Attrs attrs;
  if (name == "SgdUpdate") attrs.set("momentum", 0.9);
  KernelContext ctx = test::kernel_context(attrs, inputs, outputs, op);
  kernel(ctx);
  return outs;
}

TEST(OptimizerKernels, HalfGradientOfF32ParamsUpdatesAsItsF32Cast) {
  const std::vector<float> grad = test::random_values(64, 7);
  for (const auto& [op, kernel] : {std::pair<const char*, KernelFn>{"SgdUpdate", kernel_SgdUpdate},
                                   {"AdamUpdate", kernel_AdamUpdate},
                                   {"RmspropUpdate", kernel_RmspropUpdate}}) {
    const auto half = update_with(op, kernel, grad, true), wide = update_with(op, kernel, grad, false);
    for (size_t j = 0; j < half.size(); ++j)
      for (size_t i = 0; i < half[j].size(); ++i)
        ASSERT_EQ(half[j][i], wide[j][i]) << op << " result " << j << " element " << i;
  }
}

TEST(RmspropKernel, OperandsMustMatchTheAttributes) {
  RmspropState s({0.f, 0.f, 0.f, 0.f});
  Attrs centered;
  centered.set("centered", int64_t(1));
  EXPECT_THROW(s.step(centered, {1.f, 1.f, 1.f, 1.f}, 0.1f), Error);
}

}  // namespace
}  // namespace dlc::cpu
