// Attention fusion end to end (passes/fuse_attention.h): the parity transformer trained on the CPU
// with --attention fused takes the steps of --attention unfused in every precision (within float
// rounding: the fused kernels sum in another order, and in 16 bits the probabilities are no
// longer rounded between the Softmax and the MatMul), and its plan has one Attention and one
// AttentionGrad step per attention and no Softmax steps left. PyTorch parity of the fused
// attention is the ctest `parity_fused_attention`.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "dlc/error.h"
#include "ir/parser.h"
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

// A head size of 8 (q) or 24 (v), which the CUDA kernels do not take: fused on request, left by
// the CUDA default (`--attention auto`), which fuses only what the kernels run.
TEST(FusedAttention, CudaDefaultLeavesHeadSizesTheKernelsDoNotTake) {
  for (const auto& [depth, value_depth] : {std::pair<int, int>{8, 16}, {16, 24}, {32, 48}}) {
    const std::string text = fmt::format(R"(graph @g {{
  input %q : f32[2,5,{0}]
  input %kt : f32[2,{0},7]
  input %v : f32[2,7,{1}]
  %s = MatMul(%q, %kt) : f32[2,5,7] loc("s")
  %p = Softmax(%s) {{axis = -1}} : f32[2,5,7] loc("p")
  %o = MatMul(%p, %v) : f32[2,5,{1}] loc("o")
  return %o
}})",
                                         depth, value_depth);
    const bool runs = depth % 16 == 0 && value_depth % 16 == 0;
    for (bool cuda_shapes_only : {false, true}) {
      std::unique_ptr<ir::Graph> g = ir::parse_graph(text);
      passes::FuseAttention pass(cuda_shapes_only);
      pass.run(*g);
      const bool fused = !cuda_shapes_only || runs;
      EXPECT_EQ(pass.stats().at("attentions_fused"), fused ? 1 : 0) << depth << "x" << value_depth;
      EXPECT_EQ(pass.stats().at("attentions_left"), fused ? 0 : 1) << depth << "x" << value_depth;
    }
  }
}

}  // namespace
}  // namespace dlc
