// Fusion end to end: the parity models (tests/parity/data) trained for a few steps with and
// without the fusion pass give the same losses and the same updated weights, optimizer moments
// and running statistics, bit for bit (SGD, Adam, AdamW, RMSprop: the merged MultiTensorUpdate
// computes the unmerged updates' bits); and fusion cuts the plan's kernels per training step
// (printed: kernels_per_step with and without), the optimizer's to one.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "tests/unit/parity_training.h"

namespace dlc {
namespace {

using test::TrainRun;

class FusionTraining : public testing::TestWithParam<std::string> {};

TEST_P(FusionTraining, SameStepsWithFewerKernels) {
  const std::string model = GetParam();
  for (const char* optimizer : {"sgd", "adam", "adamw", "rmsprop"}) {
    const TrainRun plain = test::train_parity_model(model, optimizer, false, 3);
    const TrainRun fused = test::train_parity_model(model, optimizer, true, 3);
    std::cout << model << " " << optimizer << ": kernels_per_step " << plain.kernels << " unfused, "
              << fused.kernels << " fused (" << fused.fused_steps << " FusedElementwise), ratio "
              << double(fused.kernels) / double(plain.kernels) << "\n";
    EXPECT_EQ(plain.fused_steps, 0);
    // Optimizer fusion: one update step for all the parameters.
    EXPECT_GT(plain.update_steps, 1);
    EXPECT_EQ(fused.update_steps, 1);
    EXPECT_LE(fused.kernels, plain.kernels);
    // The CNN has no chain: its Relu sits between BatchNormalization and MaxPool, its ReluGrad
    // between MaxPoolGrad and BatchNormGrad.
    if (model != "cnn") {
      EXPECT_GT(fused.fused_steps, 0);
    }
    ASSERT_EQ(plain.losses.size(), fused.losses.size());
    for (size_t k = 0; k < plain.losses.size(); ++k)
      EXPECT_EQ(plain.losses[k], fused.losses[k]) << model << " " << optimizer << ": loss of step " << k;
    ASSERT_EQ(plain.state.size(), fused.state.size());
    for (const auto& [name, value] : plain.state) {
      ASSERT_TRUE(fused.state.count(name)) << name;
      EXPECT_EQ(value, fused.state.at(name)) << model << " " << optimizer << ": state " << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ParityModels, FusionTraining,
                         testing::Values("mlp", "cnn", "resnet", "transformer"));

}  // namespace
}  // namespace dlc
