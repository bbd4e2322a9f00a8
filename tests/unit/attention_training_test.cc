// Attention fusion end to end (passes/fuse_attention.h): the parity transformer trained on the CPU
// with --attention fused takes the steps of --attention unfused in every precision (within float
// rounding: the fused kernels sum in another order, and in 16 bits the probabilities are no
// longer rounded between the Softmax and the MatMul), and its plan has one Attention and one
// AttentionGrad step per attention and no Softmax steps left. PyTorch parity of the fused
// attention is the ctest `parity_fused_attention`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "dlc/error.h"
#include "passes/fuse_attention.h"
#include "tests/unit/parity_training.h"

namespace dlc {
namespace {

class FusedAttentionTraining : public testing::TestWithParam<std::string> {};

int64_t steps_of(const test::TrainRun& run, const char* kernel) {
  const auto it = run.steps_by_kernel.find(kernel);
  return it == run.steps_by_kernel.end() ? 0 : it->second;
}

TEST_P(FusedAttentionTraining, TakesTheUnfusedSteps) {
  const std::string precision = GetParam();
  const test::TrainRun unfused =
      test::train_parity_model("transformer", "adam", true, 5, {}, {}, precision, "auto", "unfused");
  const test::TrainRun fused =
      test::train_parity_model("transformer", "adam", true, 5, {}, {}, precision, "auto", "fused");
  EXPECT_EQ(steps_of(unfused, "Attention"), 0);
  EXPECT_GT(steps_of(unfused, "Softmax"), 0);
  const int64_t blocks = steps_of(unfused, "Softmax");
  EXPECT_EQ(steps_of(fused, "Attention"), blocks);
  EXPECT_EQ(steps_of(fused, "AttentionGrad"), blocks);
  EXPECT_EQ(steps_of(fused, "Softmax"), 0);
  EXPECT_EQ(steps_of(fused, "SoftmaxGrad"), 0);
  const double tolerance = precision == "fp32" ? 1e-5 : 2e-2;
  ASSERT_EQ(fused.losses.size(), unfused.losses.size());
  for (size_t k = 0; k < fused.losses.size(); ++k) {
    const double want = unfused.losses[k].as_double()[0], got = fused.losses[k].as_double()[0];
    EXPECT_NEAR(got, want, tolerance * std::max(1.0, std::abs(want))) << precision << ": loss of step " << k;
  }
  // The last loss moved: the steps trained.
  EXPECT_NE(fused.losses.front().as_double()[0], fused.losses.back().as_double()[0]);
}

INSTANTIATE_TEST_SUITE_P(Precisions, FusedAttentionTraining, testing::Values("fp32", "bf16", "fp16"),
                         [](const auto& info) { return info.param; });

TEST(FusedAttention, AutoMeansCudaInHalfPrecision) {
  EXPECT_TRUE(passes::wants_fused_attention("auto", "cuda", "bf16"));
  EXPECT_TRUE(passes::wants_fused_attention("auto", "cuda:1", "fp16"));
  EXPECT_FALSE(passes::wants_fused_attention("auto", "cuda", "fp32"));
  EXPECT_FALSE(passes::wants_fused_attention("auto", "cpu", "bf16"));
  EXPECT_TRUE(passes::wants_fused_attention("fused", "cpu", "fp32"));
  EXPECT_FALSE(passes::wants_fused_attention("unfused", "cuda", "bf16"));
  EXPECT_THROW(passes::wants_fused_attention("flash", "cuda", "bf16"), Error);
}

}  // namespace
}  // namespace dlc
