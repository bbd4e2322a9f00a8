// dlc/in_place_operands.h: the pairs both backends update in place, op by op, and through the
// merged MultiTensorUpdate's operand layout.
#include "dlc/in_place_operands.h"

#include <gtest/gtest.h>

#include <vector>

namespace dlc {
namespace {

std::vector<int> pairs(std::string_view op, const Attrs& attrs, int outputs) {
  std::vector<int> inputs;
  for (int j = 0; j < outputs; ++j) inputs.push_back(in_place_operand(op, attrs, j));
  return inputs;
}

TEST(InPlaceOperands, OptimizerUpdatesPairTheParameterAndEachState) {
  EXPECT_EQ(pairs("SgdUpdate", {}, 3), (std::vector<int>{0, 2, -1}));
  EXPECT_EQ(pairs("AdamUpdate", {}, 4), (std::vector<int>{0, 2, 3, -1}));
  EXPECT_EQ(pairs("RmspropUpdate", {}, 5), (std::vector<int>{0, 2, 4, 5, -1}));  // lr (3) is no state
}

TEST(InPlaceOperands, BatchNormUpdatesItsRunningStatisticsInTrainingOnly) {
  Attrs training;
  training.set("training_mode", int64_t(1));
  EXPECT_EQ(pairs("BatchNormalization", training, 3), (std::vector<int>{-1, 3, 4}));
  EXPECT_EQ(pairs("BatchNormalization", {}, 3), (std::vector<int>{-1, -1, -1}));
}

TEST(InPlaceOperands, MultiTensorUpdateMapsEachTensorsPairs) {
  // Adam merged over two tensors: lr, step, apply, then (p, grad, m, v) per tensor; (p', m', v')
  // each.
  Attrs adam;
  adam.set("update", std::string("AdamUpdate"));
  EXPECT_EQ(pairs("MultiTensorUpdate", adam, 6), (std::vector<int>{3, 5, 6, 7, 9, 10}));
  Attrs unknown;
  unknown.set("update", std::string("Relu"));
  EXPECT_EQ(in_place_operand("MultiTensorUpdate", unknown, 0), -1);
}

TEST(InPlaceOperands, OtherOpsHaveNone) {
  EXPECT_EQ(in_place_operand("Relu", {}, 0), -1);
  EXPECT_EQ(in_place_operand("Add", {}, 0), -1);  // buffer sharing decides elementwise pairs itself
}

}  // namespace
}  // namespace dlc
