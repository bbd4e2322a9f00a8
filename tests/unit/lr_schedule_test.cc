// Learning-rate schedules: values against Hugging Face's get_cosine_schedule_with_warmup /
// get_linear_schedule_with_warmup formulas and PyTorch's StepLR (printed by PyTorch for the same
// settings), min-lr, and the option checks.
#include <gtest/gtest.h>

#include <vector>

#include "dlc/error.h"
#include "tools/driver/lr_schedule.h"

namespace dlc::driver {
namespace {

std::vector<double> values(const LrScheduleOptions& o, int64_t n) {
  LrSchedule s(o);
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(s.at(i));
  return v;
}

void expect_values(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "step " << i;
}

TEST(LrSchedule, ConstantIsTheBaseRate) {
  expect_values(values({.kind = "constant", .lr = 0.1}, 3), {0.1, 0.1, 0.1});
}

TEST(LrSchedule, ConstantWithWarmupRisesFromZero) {
  expect_values(values({.kind = "constant", .lr = 0.1, .warmup_steps = 4}, 6),
                {0, 0.025, 0.05, 0.075, 0.1, 0.1});
}

TEST(LrSchedule, CosineWithWarmupMatchesHuggingFace) {
  // get_cosine_schedule_with_warmup(opt, num_warmup_steps=2, num_training_steps=10), lr 1.
  expect_values(values({.kind = "cosine", .lr = 1, .warmup_steps = 2, .total_steps = 10}, 11),
                {0.0, 0.5, 1.0, 0.9619397662556434, 0.8535533905932737, 0.6913417161825449, 0.5,
                 0.30865828381745514, 0.14644660940672627, 0.03806023374435663, 0.0});
}

TEST(LrSchedule, CosineEndsAtMinLrAndStaysThere) {
  LrSchedule s({.kind = "cosine", .lr = 1, .min_lr = 0.1, .total_steps = 4});
  EXPECT_DOUBLE_EQ(s.at(0), 1.0);
  EXPECT_NEAR(s.at(2), 0.1 + 0.9 * 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(s.at(4), 0.1);
  EXPECT_DOUBLE_EQ(s.at(40), 0.1);
}

TEST(LrSchedule, LinearDecaysToMinLr) {
  // get_linear_schedule_with_warmup(opt, 1, 5) scaled between min_lr 0.2 and lr 1.
  expect_values(values({.kind = "linear", .lr = 1, .min_lr = 0.2, .warmup_steps = 1, .total_steps = 5}, 6),
                {0.0, 1.0, 0.8, 0.6, 0.4, 0.2});
}

TEST(LrSchedule, StepMatchesPyTorchStepLR) {
  // StepLR(SGD(lr=0.1), step_size=3, gamma=0.5), the lr of the first 8 steps.
  expect_values(values({.kind = "step", .lr = 0.1, .step_size = 3, .gamma = 0.5}, 8),
                {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025});
}

TEST(LrSchedule, StepNeverGoesBelowMinLr) {
  EXPECT_DOUBLE_EQ(LrSchedule({.kind = "step", .lr = 1, .min_lr = 0.3, .step_size = 1, .gamma = 0.5}).at(5),
                   0.3);
}

TEST(LrSchedule, BadOptionsAreErrors) {
  EXPECT_THROW(LrSchedule({.kind = "exponential"}), Error);
  EXPECT_THROW(LrSchedule({.kind = "step", .step_size = 0}), Error);
  EXPECT_THROW(LrSchedule({.kind = "cosine", .total_steps = 0}), Error);
  EXPECT_THROW(LrSchedule({.kind = "constant", .lr = 0.1, .min_lr = 0.2}), Error);
  EXPECT_THROW(LrSchedule({.kind = "constant", .warmup_steps = -1}), Error);
}

TEST(LrSchedule, DescriptionIgnoresWhatDoesNotMatter) {
  // A constant schedule does not depend on the horizon, so extending a run keeps its checkpoints valid.
  EXPECT_EQ(LrSchedule({.kind = "constant", .total_steps = 10}).describe(),
            LrSchedule({.kind = "constant", .total_steps = 20}).describe());
  EXPECT_NE(LrSchedule({.kind = "cosine", .total_steps = 10}).describe(),
            LrSchedule({.kind = "cosine", .total_steps = 20}).describe());
}

}  // namespace
}  // namespace dlc::driver
