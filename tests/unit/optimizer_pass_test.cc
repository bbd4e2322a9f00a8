// The optimizer pass end to end on a small MLP: gradient accumulation over two half batches
// equals one step on the full batch (PyTorch's loss/K pattern) and leaves everything untouched
// on the micro-steps that do not apply; global-norm clipping scales the update as
// torch.nn.utils.clip_grad_norm_ does; RMSprop's state is created as its options ask.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "dlc/error.h"
#include "dlc/session.h"
#include "tests/unit/training_test_util.h"
#include "tools/driver/dataset.h"

namespace dlc {
namespace {

using test::random_normal;

std::unique_ptr<Session> mlp_training_session(int64_t batch, const passes::OptimizerOptions& optimizer) {
  return Session::create(codegen::lower_to_plan(*test::mlp_training_graph(batch, optimizer)));
}

Tensor rows(const Tensor& t, int64_t first, int64_t count) {
  std::vector<int64_t> indices(static_cast<size_t>(count));
  std::iota(indices.begin(), indices.end(), first);
  return driver::take_rows(t, indices);
}

Tensor bool_scalar(bool v) {
  Tensor t(TensorType{DType::Bool, {}});
  t.bytes[0] = v;
  return t;
}

void run_step(Session& s, const Tensor& x, const Tensor& label, float lr, float step) {
  s.set_input("x", x);
  s.set_input("label", label);
  s.set_input(passes::kLearningRateInput, Tensor::scalar_f32(lr));
  s.set_input(passes::kStepInput, Tensor::scalar_f32(step));
  s.run();
}

void expect_params_near(const Session& a, const Session& b, double tolerance) {
  for (const char* name : {"w1", "b1", "w2"}) {
    Tensor ta = a.read_state(name), tb = b.read_state(name);
    for (int64_t i = 0; i < ta.type.numel(); ++i)
      EXPECT_NEAR(ta.data<float>()[i], tb.data<float>()[i], tolerance) << name << "[" << i << "]";
  }
}

TEST(OptimizerPass, AccumulatingTwoHalfBatchesEqualsOneFullBatch) {
  const int64_t half = 4;
  const Tensor x = random_normal({2 * half, 5}, 7);
  const Tensor label = Tensor::from_int64({0, 2, 1, 2, 1, 0, 0, 2}, {2 * half});
  passes::OptimizerOptions sgd;
  sgd.momentum = 0.9;
  auto full = mlp_training_session(2 * half, sgd);
  sgd.accumulate = 2;
  auto micro = mlp_training_session(half, sgd);
  for (int step = 1; step <= 3; ++step) {
    run_step(*full, x, label, 0.1f, float(step));
    micro->set_input(passes::kApplyInput, bool_scalar(false));
    const Tensor before = micro->read_state("w1");
    run_step(*micro, rows(x, 0, half), rows(label, 0, half), 0.1f, float(step));
    EXPECT_EQ(micro->read_state("w1").bytes, before.bytes) << "a micro-step that does not apply changed w1";
    micro->set_input(passes::kApplyInput, bool_scalar(true));
    run_step(*micro, rows(x, half, half), rows(label, half, half), 0.1f, float(step));
    expect_params_near(*full, *micro, 1e-6);
  }
}

TEST(OptimizerPass, ClipNormScalesTheUpdateByMaxOverNorm) {
  const Tensor x = random_normal({4, 5}, 11);
  const Tensor label = Tensor::from_int64({1, 0, 2, 1}, {4});
  passes::OptimizerOptions sgd;  // lr 1, no momentum: the update is minus the gradient
  auto plain = mlp_training_session(4, sgd);
  const std::vector<std::string> names = {"w1", "b1", "w2"};
  std::map<std::string, Tensor> initial;
  for (const std::string& n : names) initial[n] = plain->read_state(n);
  run_step(*plain, x, label, 1.f, 1.f);
  double norm_squared = 0;
  std::map<std::string, std::vector<double>> grad;
  for (const std::string& n : names) {
    Tensor after = plain->read_state(n);
    for (int64_t i = 0; i < after.type.numel(); ++i) {
      const double g = double(initial[n].data<float>()[i]) - double(after.data<float>()[i]);
      grad[n].push_back(g);
      norm_squared += g * g;
    }
  }
  const double norm = std::sqrt(norm_squared), max_norm = 0.25 * norm;
  const double coef = max_norm / (norm + 1e-6);
  sgd.clip_norm = max_norm;
  auto clipped = mlp_training_session(4, sgd);
  run_step(*clipped, x, label, 1.f, 1.f);
  for (const std::string& n : names) {
    Tensor after = clipped->read_state(n);
    for (int64_t i = 0; i < after.type.numel(); ++i)
      EXPECT_NEAR(after.data<float>()[i], initial[n].data<float>()[i] - coef * grad[n][size_t(i)], 1e-6)
          << n << "[" << i << "]";
  }
  // A bound above the norm leaves the gradients as they are (coef clamps to exactly 1).
  sgd.clip_norm = 4 * norm;
  auto loose = mlp_training_session(4, sgd);
  run_step(*loose, x, label, 1.f, 1.f);
  for (const std::string& n : names) EXPECT_EQ(loose->read_state(n).bytes, plain->read_state(n).bytes) << n;
}

TEST(OptimizerPass, RmspropStateFollowsItsOptions) {
  passes::OptimizerOptions rmsprop;
  rmsprop.kind = "rmsprop";
  auto state_of = [&] {
    std::vector<std::string> names = mlp_training_session(2, rmsprop)->state_names();
    return std::set<std::string>(names.begin(), names.end());
  };
  std::set<std::string> plain = state_of();
  EXPECT_TRUE(plain.count("w1.square_avg"));
  EXPECT_FALSE(plain.count("w1.grad_avg"));
  EXPECT_FALSE(plain.count("w1.momentum_buffer"));
  rmsprop.centered = true;
  rmsprop.momentum = 0.5;
  std::set<std::string> full = state_of();
  EXPECT_TRUE(full.count("w1.grad_avg"));
  EXPECT_TRUE(full.count("w1.momentum_buffer"));
}

TEST(OptimizerPass, BadOptionsAreErrors) {
  passes::OptimizerOptions o;
  o.kind = "adagrad";
  EXPECT_THROW(mlp_training_session(2, o), Error);
  o.kind = "sgd";
  o.clip_norm = -1;
  EXPECT_THROW(mlp_training_session(2, o), Error);
  o.clip_norm = 0;
  o.accumulate = 0;
  EXPECT_THROW(mlp_training_session(2, o), Error);
}

}  // namespace
}  // namespace dlc
