// Whole training steps on the GPU: a parity model's training plan (the mlp in each precision; the
// cnn, whose convolutions, pooling and batch norm are cuDNN calls, in each precision; cnn_bias,
// whose convolution bias gradients are gathered reductions and whose average pooling has both
// padding modes, in each precision; resnet, whose residual Adds run in half under bf16, in fp32
// and bf16; the transformer in fp32 and bf16; conv_same, whose convolutions pad more at the end
// than cuDNN's symmetric padding can, in fp32 and bf16) compiled for cuda:0 and for the CPU trains 5 steps on
// the same batches with the same losses and ends with the same state (parameters, optimizer
// moments, running statistics). A CUDA Graph replay gives the eager CUDA run's losses (up to the
// order of the embedding backward's atomic adds), and the cnns' and resnet's with timed cuDNN
// algorithms (--cudnn-benchmark) match the CPU's too. Without a GPU the CUDA plan still compiles
// (NVRTC) and the session must refuse it with an error naming the missing device; the GPU cases
// then skip. The 16-bit plans' convolutions, pooling and batch norm are channels-last
// (passes/channels_last.h, the default for them) against the CPU's channels-first;
// CudaTrainingChannelsLast asks for it in fp32 too. CudaTrainingHostSteps trains the mlp with
// centered RMSprop with momentum, whose updates have no CUDA kernel and run on the host.
// dlc_emulated_gpu_tests builds this file again with DLC_EMULATED_DEVICE: the CUDA plans then run
// on the emulated device (tests/emulation/emulated_session.h: the generated kernels emulated, the
// runtime's library calls against the emulated cuBLASLt and cuDNN), where graph replay and timed
// cuDNN algorithms have no counterpart and are not compared.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "dlc/error.h"
#include "dlc/session.h"
#include "runtime/plan/plan_values.h"
#ifdef DLC_EMULATED_DEVICE
#include "tests/emulation/emulated_session.h"
#else
#include "runtime/cuda/cudnn_calls.h"
#include "runtime/cuda/device.h"
#endif
#include "tests/emulation/host_elements.h"
#include "tests/unit/source_dir.h"
#include "tools/driver/checkpoint.h"
#include "tools/driver/train_compile.h"
#include "tools/driver/trainer.h"

namespace dlc {
namespace {

struct TrainingCase {
  std::string model;
  int64_t batch;
  std::string precision;
};

void PrintTo(const TrainingCase& c, std::ostream* os) {
  *os << c.model << " " << c.precision << " batch " << c.batch;
}

std::string data_dir(const TrainingCase& c) { return test::parity_dir(c.model); }

passes::OptimizerOptions adam() {
  passes::OptimizerOptions o;
  o.kind = "adam";
  return o;
}

plan::Plan training_plan(const TrainingCase& c, const std::string& device, const std::string& layout = "auto",
                         const passes::OptimizerOptions& optimizer = adam()) {
  driver::TrainCompileOptions options;
  options.layout = layout;
  options.compile.import.batch = c.batch;
  options.compile.device = device;
  options.optimizer = optimizer;
  options.precision = c.precision;
  return driver::compile_training(data_dir(c) + "/model.onnx", options).plan;
}

// What 5 training steps give: each step's loss and the session's state at the end (parameters,
// optimizer moments, running statistics), from the checkpoint the run writes.
struct Trained {
  std::vector<double> losses;
  std::map<std::string, Tensor> state;
};

Trained train(const TrainingCase& c, const plan::Plan& plan, bool cuda_graph = false,
              bool cudnn_benchmark = false) {
  driver::TrainOptions options;
  options.data = data_dir(c) + "/data.npz";
  options.steps = 5;
  options.cuda_graph = cuda_graph;
  options.cudnn_benchmark = cudnn_benchmark;
  options.save = ::testing::TempDir() + "cuda_training_" + c.model + "_" + c.precision + ".npz";
  Trained t;
  options.on_step = [&](int64_t, int64_t, double loss, double) { t.losses.push_back(loss); };
  driver::train_plan(plan, c.model, options);
  t.state = driver::read_checkpoint(options.save).state;
  std::remove(options.save.c_str());
  return t;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance * std::max(1.0, std::abs(want[i]))) << what << ", step " << i + 1;
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(size_t(t.type.numel()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = emulation::load_element(t.type.dtype, t.bytes.data(), int64_t(i));
  return v;
}

// Every state value of `want` is in `got` with the same type, and the two differ by at most
// `tolerance` of `want`'s norm (elementwise comparison would be too strict: Adam moves a weight
// whose gradient is near zero by its whole step either way, so a rounding difference in such a
// gradient moves it by twice the learning rate).
void expect_state_close(const std::map<std::string, Tensor>& got, const std::map<std::string, Tensor>& want,
                        double tolerance, const std::string& what) {
  ASSERT_FALSE(want.empty()) << what;
  for (const auto& [name, value] : want) {
    const auto it = got.find(name);
    ASSERT_NE(it, got.end()) << what << ": no state '" << name << "'";
    ASSERT_EQ(it->second.type, value.type) << what << ": state '" << name << "'";
    const std::vector<double> g = values_of(it->second), w = values_of(value);
    double difference = 0, norm = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      difference += (g[i] - w[i]) * (g[i] - w[i]);
      norm += w[i] * w[i];
    }
    EXPECT_LE(std::sqrt(difference), tolerance * std::sqrt(norm)) << what << ": state '" << name << "'";
  }
}

class CudaTraining : public ::testing::TestWithParam<TrainingCase> {};

// Whether CUDA plans can run: on a GPU, or (DLC_EMULATED_DEVICE) on the emulated device, whose
// session factory this installs.
bool have_cuda_device() {
#ifdef DLC_EMULATED_DEVICE
  Session::set_cuda_session_factory(emulation::create_emulated_cuda_session);
  return true;
#else
  return cuda::cuda_device_count() > 0;
#endif
}

// Trains `c` on cuda:0 with `layout` against the CPU plan (channels-first); without a GPU, checks
// that the session refuses the plan and skips.
void expect_cuda_matches_cpu(const TrainingCase& c, const std::string& layout,
                             const passes::OptimizerOptions& optimizer = adam()) {
  const plan::Plan cuda_plan = training_plan(c, "cuda", layout, optimizer);
  if (!have_cuda_device()) {
    try {
      Session::create(cuda_plan);
      FAIL() << "a CUDA plan ran without a GPU";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the plan runs on cuda:0, but no CUDA device is available here"),
                std::string::npos)
          << e.what();
    }
    GTEST_SKIP() << "no CUDA device";
  }
  const Trained cpu = train(c, training_plan(c, "cpu", "nchw", optimizer));
  const Trained gpu = train(c, cuda_plan);
  ASSERT_EQ(cpu.losses.size(), 5u);
  const double tolerance = c.precision == "fp32" ? 1e-3 : 2e-2;  // 16-bit: rounding order differs
  expect_close(gpu.losses, cpu.losses, tolerance, "CUDA vs CPU");
  // The state after 5 steps, to a fraction of each value's norm: at most 2.2e-6 in fp32 and 0.09 in
  // 16-bit (an Adam moment of upsample bf16) on the emulated device.
  expect_state_close(gpu.state, cpu.state, c.precision == "fp32" ? 5e-5 : 0.25, "CUDA vs CPU");
#ifdef DLC_EMULATED_DEVICE
  return;  // no graph replay or timed algorithms to compare
#endif
  expect_close(train(c, cuda_plan, true).losses, gpu.losses, 1e-5, "CUDA Graph replay vs eager");
  // Timed cuDNN algorithms (--cudnn-benchmark) compute the same convolutions another way.
  if (c.model.rfind("cnn", 0) == 0 || c.model == "resnet")
    expect_close(train(c, cuda_plan, false, true).losses, cpu.losses, tolerance, "cudnn benchmark vs CPU");
}

// The default layout: channels-last for the 16-bit plans' cuDNN calls, channels-first in fp32.
TEST_P(CudaTraining, LossesMatchTheCpuPlan) { expect_cuda_matches_cpu(GetParam(), "auto"); }

// The channels-last cuDNN calls in fp32, where the CPU's losses are matched closely.
class CudaTrainingChannelsLast : public ::testing::TestWithParam<TrainingCase> {};

TEST_P(CudaTrainingChannelsLast, LossesMatchTheChannelsFirstCpuPlan) {
  expect_cuda_matches_cpu(GetParam(), "nhwc");
}

// Centered RMSprop with momentum has no CUDA kernel: its updates run on the host by their CPU
// kernels (the parameters and their three states copied from the device and back each step),
// and the run still matches the CPU plan's, on a GPU in a CUDA Graph too.
TEST(CudaTrainingHostSteps, CenteredRmspropWithMomentumUpdatesOnTheHost) {
  passes::OptimizerOptions rmsprop;
  rmsprop.kind = "rmsprop";
  rmsprop.centered = true;
  rmsprop.momentum = 0.9;
  const TrainingCase c{"mlp", 16, "fp32"};
  int host_steps = 0;
  const plan::Plan p = training_plan(c, "cuda", "auto", rmsprop);
  for (const plan::Step& step : p.stages(0).steps())
    if (step.cuda().call() == "cpu") {
      ++host_steps;
      EXPECT_NE(step.cuda().host_reason().find("centered with momentum"), std::string::npos)
          << step.name() << ": " << step.cuda().host_reason();
    }
  EXPECT_GT(host_steps, 0);
  expect_cuda_matches_cpu(c, "auto", rmsprop);
}

#ifndef DLC_EMULATED_DEVICE
// The key cuDNN's algorithm choice is cached under, for every cuDNN call of the cnn's plans (the
// first GPU run found it read the string dtype as integers; this needs no GPU).
TEST(CudnnProblemKey, EveryCudnnStepOfTheCnnPlansHasOne) {
  for (const char* precision : {"fp32", "bf16"}) {
    SCOPED_TRACE(precision);
    const plan::Plan p = training_plan(TrainingCase{"cnn", 8, precision}, "cuda");
    std::set<std::string> keys;
    int calls = 0;
    for (const plan::Step& step : p.stages(0).steps()) {
      if (step.cuda().kind() != plan::CudaStep::LIBRARY || !cuda::is_cudnn_call(step.cuda().call())) continue;
      ++calls;
      const Attrs params = plan::from_proto(step.cuda().params(), step.name());
      const std::string key = cuda::cudnn_problem_key(step.cuda().call(), params);
      EXPECT_EQ(key.rfind(step.cuda().call() + " dtype=" + params.s("dtype") + " input0_dims=", 0), 0u)
          << key;
      // The bf16 plan is channels-last (the default for 16-bit CUDA plans): another problem.
      EXPECT_EQ(key.find(" channels_last") != std::string::npos, std::string(precision) == "bf16") << key;
      keys.insert(key);
    }
    EXPECT_GT(calls, 8) << "convolutions, pooling and batch norm, forward and backward";
    EXPECT_GT(keys.size(), 4u) << "problems of different calls and shapes have different keys";
  }
}
#endif

INSTANTIATE_TEST_SUITE_P(
    Parity, CudaTraining,
    ::testing::Values(TrainingCase{"mlp", 16, "fp32"}, TrainingCase{"mlp", 16, "bf16"},
                      TrainingCase{"mlp", 16, "fp16"}, TrainingCase{"cnn", 8, "fp32"},
                      TrainingCase{"cnn", 8, "bf16"}, TrainingCase{"cnn", 8, "fp16"},
                      TrainingCase{"cnn_bias", 8, "fp32"}, TrainingCase{"cnn_bias", 8, "bf16"},
                      TrainingCase{"cnn_bias", 8, "fp16"}, TrainingCase{"resnet", 8, "fp32"},
                      TrainingCase{"resnet", 8, "bf16"}, TrainingCase{"transformer", 8, "fp32"},
                      TrainingCase{"transformer", 8, "bf16"}, TrainingCase{"einsum", 8, "fp32"},
                      TrainingCase{"einsum", 8, "bf16"}, TrainingCase{"upsample", 8, "fp32"},
                      TrainingCase{"upsample", 8, "bf16"}, TrainingCase{"recurrent", 8, "fp32"},
                      TrainingCase{"recurrent", 8, "bf16"}, TrainingCase{"conv_same", 8, "fp32"},
                      TrainingCase{"conv_same", 8, "bf16"}),
    [](const auto& info) { return info.param.model + "_" + info.param.precision; });

INSTANTIATE_TEST_SUITE_P(Parity, CudaTrainingChannelsLast,
                         ::testing::Values(TrainingCase{"cnn", 8, "fp32"},
                                           TrainingCase{"cnn_bias", 8, "fp32"},
                                           TrainingCase{"resnet", 8, "fp32"},
                                           TrainingCase{"resnet", 8, "fp16"}),
                         [](const auto& info) { return info.param.model + "_" + info.param.precision; });

}  // namespace
}  // namespace dlc
