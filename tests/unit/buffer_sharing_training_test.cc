// Buffer sharing end to end: the parity models trained for a few steps with the plan's Reshape
// views and in-place state updates on and off (fused and unfused) give the same losses and the
// same weights, moments and running statistics, bit for bit, with fewer steps (printed).
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "tests/unit/parity_training.h"

namespace dlc {
namespace {

using test::TrainRun;

class BufferSharingTraining : public testing::TestWithParam<std::string> {};

TEST_P(BufferSharingTraining, SameStepsWithFewerKernels) {
  const std::string model = GetParam();
  for (const char* optimizer : {"sgd", "adam"})
    for (bool fuse : {false, true}) {
      const std::string what = model + " " + optimizer + (fuse ? " fused" : " unfused");
      const TrainRun plain = test::train_parity_model(model, optimizer, fuse, 3, {false, false});
      const TrainRun shared = test::train_parity_model(model, optimizer, fuse, 3);
      std::cout << what << ": kernels_per_step " << plain.kernels << " without sharing, " << shared.kernels
                << " with\n";
      EXPECT_LT(shared.kernels, plain.kernels) << what;
      test::expect_same_training(plain, shared, what);
    }
}

INSTANTIATE_TEST_SUITE_P(ParityModels, BufferSharingTraining, testing::Values("mlp", "cnn", "transformer"));

}  // namespace
}  // namespace dlc
