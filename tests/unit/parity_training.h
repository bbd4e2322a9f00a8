// Helpers of the end-to-end training tests: a parity model (tests/parity/data/MODEL) compiled
// into a training plan with the given options and trained for a few steps on its data.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dlc/channels_last.h"
#include "dlc/npy.h"
#include "dlc/session.h"
#include "tests/unit/source_dir.h"
#include "tools/driver/train_compile.h"

namespace dlc::test {

struct TrainRun {
  int64_t kernels = 0;  // plan steps of one training step
  int64_t fused_steps = 0;
  int64_t update_steps = 0;  // optimizer updates, merged (MultiTensorUpdate) or not
  std::map<std::string, int64_t> steps_by_kernel;
  int64_t layout_steps = 0;                 // convolution, pooling and batch norm steps
  int64_t channels_last_steps = 0;          // those with the attribute channels_last = 1
  int64_t peak_bytes = 0, arena_bytes = 0;  // the plan's memory figures
  std::vector<Tensor> losses;
  std::map<std::string, Tensor> state;
};

/// Trains `model` for `steps` steps with `optimizer` (lr 0.1 for SGD, else 1e-3), the fusion
/// pass on or off, the plan's buffer sharing as given, the passes in `disabled` switched off and
/// the precision, layout and attention (TrainCompileOptions) as given.
inline TrainRun train_parity_model(const std::string& model, const std::string& optimizer, bool fuse,
                                   int steps, const codegen::AliasOptions& aliases = {},
                                   const std::vector<std::string>& disabled = {},
                                   const std::string& precision = "fp32", const std::string& layout = "auto",
                                   const std::string& attention = "auto") {
  const std::string dir = parity_dir(model);
  const std::map<std::string, Tensor> data = read_npz(dir + "/data.npz");
  driver::TrainCompileOptions options;
  options.compile.import.batch = data.at("label").type.shape.at(0);
  options.optimizer.kind = optimizer;
  options.compile.pipeline.disabled = disabled;
  if (!fuse) options.compile.pipeline.disabled.push_back("fusion");
  options.compile.aliases = aliases;
  options.precision = precision;
  options.layout = layout;
  options.attention = attention;
  const driver::Compiled c = driver::compile_training(dir + "/model.onnx", options);
  TrainRun run;
  for (const plan::Stage& stage : c.plan.stages()) {
    run.kernels += stage.steps_size();
    for (const plan::Step& step : stage.steps()) {
      run.fused_steps += step.kernel() == "FusedElementwise";
      run.update_steps += step.kernel() == "MultiTensorUpdate" || step.kernel() == "SgdUpdate" ||
                          step.kernel() == "AdamUpdate" || step.kernel() == "RmspropUpdate";
      ++run.steps_by_kernel[step.kernel()];
      run.layout_steps += takes_channels_last(step.kernel());
      for (const plan::Attribute& a : step.attrs())
        run.channels_last_steps += a.name() == "channels_last" && a.i() != 0;
    }
    run.peak_bytes += stage.peak_bytes();
    run.arena_bytes += stage.arena_bytes();
  }
  std::unique_ptr<Session> session = Session::create(c.plan, {1});
  for (int k = 0; k < steps; ++k) {
    for (const Session::Signature& in : session->inputs()) {
      if (data.count(in.name))
        session->set_input(in.name, data.at(in.name));
      else if (in.name == "lr")
        session->set_input(in.name, Tensor::scalar_f32(optimizer == "sgd" ? 0.1f : 1e-3f));
      else if (in.name == "step")
        session->set_input(in.name, Tensor::scalar_f32(float(k + 1)));
      else
        ADD_FAILURE() << model << ": unexpected input " << in.name;
    }
    session->run();
    run.losses.push_back(session->output(session->outputs().at(0).name));
  }
  for (const std::string& name : session->state_names()) run.state[name] = session->read_state(name);
  return run;
}

/// Expects two runs to have logged the same losses and ended with the same state, bit for bit.
inline void expect_same_training(const TrainRun& want, const TrainRun& got, const std::string& what) {
  ASSERT_EQ(want.losses.size(), got.losses.size()) << what;
  for (size_t k = 0; k < want.losses.size(); ++k)
    EXPECT_EQ(want.losses[k], got.losses[k]) << what << ": loss of step " << k;
  ASSERT_EQ(want.state.size(), got.state.size()) << what;
  for (const auto& [name, value] : want.state) {
    ASSERT_TRUE(got.state.count(name)) << what << ": state " << name;
    EXPECT_EQ(value, got.state.at(name)) << what << ": state " << name;
  }
}

}  // namespace dlc::test
