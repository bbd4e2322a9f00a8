// Fusion end to end: the parity models (tests/parity/data) trained for a few steps with and
// without the fusion pass give the same losses and the same updated weights, optimizer moments
// and running statistics, bit for bit; and fusion cuts the plan's kernels per training step
// (printed: kernels_per_step with and without).
#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include "dlc/npy.h"
#include "dlc/session.h"
#include "tools/driver/train_compile.h"

namespace dlc {
namespace {

struct TrainRun {
  int64_t kernels = 0;  // plan steps of one training step
  int64_t fused_steps = 0;
  std::vector<Tensor> losses;
  std::map<std::string, Tensor> state;
};

Tensor scalar_f32(float v) {
  Tensor t(TensorType{DType::F32, {}});
  *t.data<float>() = v;
  return t;
}

TrainRun train(const std::string& model, const std::string& optimizer, bool fuse, int steps) {
  const std::string dir = std::string(DLC_SOURCE_DIR) + "/tests/parity/data/" + model;
  const std::map<std::string, Tensor> data = read_npz(dir + "/data.npz");
  driver::TrainCompileOptions options;
  options.compile.import.batch = data.at("label").type.shape.at(0);
  options.optimizer.kind = optimizer;
  if (!fuse) options.compile.pipeline.disabled = {"fusion"};
  const driver::Compiled c = driver::compile_training(dir + "/model.onnx", options);
  TrainRun run;
  for (const plan::Stage& stage : c.plan.stages()) {
    run.kernels += stage.steps_size();
    for (const plan::Step& step : stage.steps()) run.fused_steps += step.kernel() == "FusedElementwise";
  }
  std::unique_ptr<Session> session = Session::create(c.plan, {1});
  for (int k = 0; k < steps; ++k) {
    for (const Session::Signature& in : session->inputs()) {
      if (data.count(in.name))
        session->set_input(in.name, data.at(in.name));
      else if (in.name == "lr")
        session->set_input(in.name, scalar_f32(optimizer == "sgd" ? 0.1f : 1e-3f));
      else if (in.name == "step")
        session->set_input(in.name, scalar_f32(float(k + 1)));
      else
        ADD_FAILURE() << model << ": unexpected input " << in.name;
    }
    session->run();
    run.losses.push_back(session->output(session->outputs().at(0).name));
  }
  for (const std::string& name : session->state_names()) run.state[name] = session->read_state(name);
  return run;
}

class FusionTraining : public testing::TestWithParam<std::string> {};

TEST_P(FusionTraining, SameStepsWithFewerKernels) {
  const std::string model = GetParam();
  for (const char* optimizer : {"sgd", "adam"}) {
    const TrainRun plain = train(model, optimizer, false, 3);
    const TrainRun fused = train(model, optimizer, true, 3);
    std::cout << model << " " << optimizer << ": kernels_per_step " << plain.kernels << " unfused, "
              << fused.kernels << " fused (" << fused.fused_steps << " FusedElementwise), ratio "
              << double(fused.kernels) / double(plain.kernels) << "\n";
    EXPECT_EQ(plain.fused_steps, 0);
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

INSTANTIATE_TEST_SUITE_P(ParityModels, FusionTraining, testing::Values("mlp", "cnn", "transformer"));

}  // namespace
}  // namespace dlc
