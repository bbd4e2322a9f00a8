// The conv-bias-grad pass (passes/conv_bias_grad.h) end to end: the parity CNN whose convolutions
// have biases trains on the CPU with each bias gradient computed in its ConvGradFilter step, one
// ReduceSum step fewer per convolution, and the losses and state of the plan without the pass
// within f32 rounding (oneDNN sums the bias gradient in f32, in its own order).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/parity_training.h"

namespace dlc {
namespace {

using test::TrainRun;

void expect_close(const Tensor& want, const Tensor& got, const std::string& what) {
  ASSERT_EQ(want.type, got.type) << what;
  const std::vector<double> w = want.as_double(), g = got.as_double();
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-5 + 1e-4 * std::abs(w[i])) << what << " [" << i << "]";
}

TEST(ConvBiasGrad, CpuPlansSumTheBiasGradientsInTheFilterGradients) {
  const TrainRun folded = test::train_parity_model("cnn_bias", "adam", true, 3);
  const TrainRun apart = test::train_parity_model("cnn_bias", "adam", true, 3, {}, {"conv-bias-grad"});
  const auto count = [](const TrainRun& run, const char* kernel) {
    const auto it = run.steps_by_kernel.find(kernel);
    return it == run.steps_by_kernel.end() ? int64_t(0) : it->second;
  };
  const int64_t filter_grads = count(apart, "ConvGradFilter");
  ASSERT_GT(filter_grads, 0);
  EXPECT_EQ(count(folded, "ConvGradFilter"), filter_grads);
  // Every convolution of the model has a bias: one ReduceSum step gone per filter gradient.
  EXPECT_EQ(count(apart, "ReduceSum") - count(folded, "ReduceSum"), filter_grads);
  EXPECT_EQ(apart.kernels - folded.kernels, filter_grads);
  ASSERT_EQ(folded.losses.size(), apart.losses.size());
  for (size_t k = 0; k < apart.losses.size(); ++k)
    expect_close(apart.losses[k], folded.losses[k], "loss of step " + std::to_string(k));
  ASSERT_EQ(folded.state.size(), apart.state.size());
  for (const auto& [name, value] : apart.state) {
    ASSERT_TRUE(folded.state.count(name)) << name;
    expect_close(value, folded.state.at(name), name);
  }
}

}  // namespace
}  // namespace dlc
