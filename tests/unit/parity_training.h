// Helpers of the end-to-end training tests: a parity model (tests/parity/data/MODEL) compiled
// into a training plan with the given options and trained for a few steps on its data.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dlc/npy.h"
#include "dlc/session.h"
#include "tools/driver/train_compile.h"

namespace dlc::test {

struct TrainRun {
  int64_t kernels = 0;  // plan steps of one training step
  int64_t fused_steps = 0;
  std::vector<Tensor> losses;
  std::map<std::string, Tensor> state;
};

inline Tensor scalar_f32(float v) {
  Tensor t(TensorType{DType::F32, {}});
  *t.data<float>() = v;
  return t;
}

/// Trains `model` for `steps` steps with `optimizer` (lr 0.1 for SGD, else 1e-3), the fusion
/// pass on or off and the plan's buffer sharing as given.
inline TrainRun train_parity_model(const std::string& model, const std::string& optimizer, bool fuse,
                                   int steps, const codegen::AliasOptions& aliases = {}) {
  const std::string dir = std::string(DLC_SOURCE_DIR) + "/tests/parity/data/" + model;
  const std::map<std::string, Tensor> data = read_npz(dir + "/data.npz");
  driver::TrainCompileOptions options;
  options.compile.import.batch = data.at("label").type.shape.at(0);
  options.optimizer.kind = optimizer;
  if (!fuse) options.compile.pipeline.disabled = {"fusion"};
  options.compile.aliases = aliases;
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

}  // namespace dlc::test
