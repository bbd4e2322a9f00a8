// Training-mode Dropout: the training-mode pass makes it output its mask and draw with the run
// counter as its Philox offset, so masks change from run to run, repeat when the counter is
// restored, and the gradient applies the forward's mask.
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "dlc/session.h"
#include "ir/verifier.h"
#include "passes/autodiff.h"
#include "passes/training_mode.h"

namespace dlc {
namespace {

TEST(DropoutTraining, MasksChangeEveryRunAndRepeatFromTheSameCounter) {
  ir::Graph g;
  std::vector<double> ones(64, 1.0);
  ir::Value* x = g.add_parameter("x", Tensor::from_double(DType::F32, ones, {64}));
  Attrs a;
  a.set("ratio", 0.5);
  a.set("seed", int64_t(5));
  ir::Value* y = g.add_node(ir::OpKind::Dropout, {x}, a, {"y"}, "drop")->outputs[0];
  g.add_output(g.add_node(ir::OpKind::ReduceSum, {y}, {}, {"loss"})->outputs[0]);
  passes::TrainingMode().run(g);
  passes::Autodiff().run(g);
  ir::verify(g);
  ir::Value* mask = g.find_value("y")->producer->outputs[1];
  ASSERT_NE(mask, nullptr);
  g.set_outputs({g.find_value("y"), mask, g.find_value("x@grad")});
  auto session = Session::create(codegen::lower_to_plan(g));
  std::vector<std::vector<double>> masks;
  for (int run = 0; run < 3; ++run) {
    if (run == 2) session->write_state(passes::kDropoutCounter, Tensor::from_int64({0}, {}));
    session->run();
    const std::vector<double> m = session->output(mask->name).as_double();
    const std::vector<double> out = session->output("y").as_double();
    const std::vector<double> grad = session->output("x@grad").as_double();
    for (size_t i = 0; i < m.size(); ++i) {
      EXPECT_EQ(out[i], m[i] * 2.0) << i;   // y = x * mask / (1 - ratio) with x = 1
      EXPECT_EQ(grad[i], m[i] * 2.0) << i;  // the gradient applies the same mask
    }
    masks.push_back(m);
  }
  EXPECT_NE(masks[0], masks[1]);
  EXPECT_EQ(masks[0], masks[2]);
}

}  // namespace
}  // namespace dlc
