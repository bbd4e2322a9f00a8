// Scheduling end to end: the parity models (tests/parity/data) trained for a few steps with and
// without the schedule pass give the same losses and the same weights, optimizer moments and
// running statistics, bit for bit, and the scheduled plan's peak and arena are no larger
// (printed: both figures with and without).
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "tests/unit/parity_training.h"

namespace dlc {
namespace {

using test::TrainRun;

class ScheduleTraining : public testing::TestWithParam<std::string> {};

TEST_P(ScheduleTraining, SameStepsInNoMoreMemory) {
  const std::string model = GetParam();
  for (const char* optimizer : {"sgd", "adam"}) {
    const std::string what = model + " " + optimizer;
    const TrainRun plain = test::train_parity_model(model, optimizer, true, 3, {}, {"schedule"});
    const TrainRun scheduled = test::train_parity_model(model, optimizer, true, 3);
    std::cout << what << ": peak_bytes " << plain.peak_bytes << " -> " << scheduled.peak_bytes
              << ", arena_bytes " << plain.arena_bytes << " -> " << scheduled.arena_bytes << "\n";
    EXPECT_LE(scheduled.peak_bytes, plain.peak_bytes) << what;
    EXPECT_LE(scheduled.arena_bytes, plain.arena_bytes) << what;
    EXPECT_EQ(scheduled.kernels, plain.kernels) << what;
    test::expect_same_training(plain, scheduled, what);
  }
}

INSTANTIATE_TEST_SUITE_P(ParityModels, ScheduleTraining, testing::Values("mlp", "cnn", "transformer"));

}  // namespace
}  // namespace dlc
