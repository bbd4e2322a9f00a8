// The channels-last layout end to end (passes/channels_last.h): the CNN parity models trained on
// the CPU with --layout nhwc give the losses, weights, Adam moments and running statistics of
// --layout nchw bit for bit in every precision (the CPU kernels run channels-last nodes on
// channels-first copies, runtime/cpu/channels_first.h, so only the order of elements differs),
// every convolution, pooling and batch norm step is channels-last, and the Transposes left are
// the edges': the input's, each convolution weight's and weight gradient's, and two where the
// convolutional part meets the head.
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <tuple>

#include "dlc/channels_last.h"
#include "dlc/error.h"
#include "passes/channels_last.h"
#include "tests/unit/parity_training.h"

namespace dlc {
namespace {

using test::TrainRun;

class ChannelsLastTraining : public testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(ChannelsLastTraining, SameStepsAsChannelsFirst) {
  const auto& [model, precision] = GetParam();
  const TrainRun first = test::train_parity_model(model, "adam", true, 3, {}, {}, precision, "nchw");
  const TrainRun last = test::train_parity_model(model, "adam", true, 3, {}, {}, precision, "nhwc");
  test::expect_same_training(first, last, model + " " + precision);
  EXPECT_EQ(first.channels_last_steps, 0);
  EXPECT_EQ(first.steps_by_kernel.count("Transpose"), 0u);
  EXPECT_GT(last.layout_steps, 0);
  EXPECT_EQ(last.channels_last_steps, last.layout_steps);
  // The Transposes left: one per convolution weight (Conv) and weight gradient (ConvGradFilter),
  // the input's, and where the convolutional part meets the head, one forward and one backward.
  const auto count = [&](const char* kernel) {
    const auto it = last.steps_by_kernel.find(kernel);
    return it == last.steps_by_kernel.end() ? int64_t(0) : it->second;
  };
  std::cout << model << " " << precision << ": " << last.layout_steps << " channels-last steps, "
            << count("Transpose") << " Transposes\n";
  EXPECT_EQ(count("Transpose"), count("Conv") + count("ConvGradFilter") + 3);
}

INSTANTIATE_TEST_SUITE_P(ParityModels, ChannelsLastTraining,
                         testing::Combine(testing::Values("cnn", "cnn_bias", "resnet"),
                                          testing::Values("fp32", "bf16", "fp16")),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param);
                         });

TEST(ChannelsLastLayout, AutoMeansCudaInHalfPrecision) {
  EXPECT_TRUE(passes::wants_channels_last("auto", "cuda", "bf16"));
  EXPECT_TRUE(passes::wants_channels_last("auto", "cuda:1", "fp16"));
  EXPECT_FALSE(passes::wants_channels_last("auto", "cuda", "fp32"));
  EXPECT_FALSE(passes::wants_channels_last("auto", "cpu", "bf16"));
  EXPECT_TRUE(passes::wants_channels_last("nhwc", "cpu", "fp32"));
  EXPECT_FALSE(passes::wants_channels_last("nchw", "cuda", "bf16"));
  EXPECT_THROW(passes::wants_channels_last("chw", "cuda", "bf16"), Error);
}

TEST(ChannelsLastLayout, Permutations) {
  EXPECT_EQ(to_channels_last_perm(4), (Shape{0, 2, 3, 1}));
  EXPECT_EQ(to_channels_first_perm(4), (Shape{0, 3, 1, 2}));
  EXPECT_EQ(to_channels_last_perm(3), (Shape{0, 2, 1}));
  EXPECT_EQ(to_channels_first_perm(5), (Shape{0, 4, 1, 2, 3}));
  EXPECT_EQ(channels_last_dims({8, 3, 5, 7}), (Shape{8, 5, 7, 3}));
  EXPECT_EQ(channels_first_dims({8, 5, 7, 3}), (Shape{8, 3, 5, 7}));
  EXPECT_EQ(channels_first_dims({64}), (Shape{64}));
}

}  // namespace
}  // namespace dlc
