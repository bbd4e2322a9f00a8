// Whole training steps on the GPU: the mlp parity model's training plan compiled for cuda:0 and
// for the CPU trains 5 steps on the same batches with the same losses; a CUDA Graph replay gives
// the eager CUDA run's losses. Without a GPU the CUDA plan still compiles (NVRTC) and the session
// must refuse it with an error naming the missing device; the GPU cases then skip.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dlc/error.h"
#include "dlc/session.h"
#include "runtime/cuda/device.h"
#include "tools/driver/train_compile.h"
#include "tools/driver/trainer.h"

namespace dlc {
namespace {

const std::string kMlp = std::string(DLC_SOURCE_DIR) + "/tests/parity/data/mlp";

plan::Plan mlp_plan(const std::string& device, const std::string& precision) {
  driver::TrainCompileOptions options;
  options.compile.import.batch = 16;
  options.compile.device = device;
  options.optimizer.kind = "adam";
  options.precision = precision;
  return driver::compile_training(kMlp + "/model.onnx", options).plan;
}

std::vector<double> losses_of(const plan::Plan& plan, bool cuda_graph = false) {
  driver::TrainOptions options;
  options.data = kMlp + "/data.npz";
  options.steps = 5;
  options.cuda_graph = cuda_graph;
  std::vector<double> losses;
  options.on_step = [&](int64_t, int64_t, double loss, double) { losses.push_back(loss); };
  driver::train_plan(plan, "mlp", options);
  return losses;
}

class CudaTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaTraining, MlpLossesMatchTheCpuPlan) {
  const plan::Plan cuda_plan = mlp_plan("cuda", GetParam());
  if (cuda::cuda_device_count() == 0) {
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
  const std::vector<double> cpu = losses_of(mlp_plan("cpu", GetParam()));
  const std::vector<double> gpu = losses_of(cuda_plan);
  ASSERT_EQ(gpu.size(), 5u);
  ASSERT_EQ(cpu.size(), 5u);
  const double tolerance = GetParam() == "fp32" ? 1e-3 : 2e-2;  // 16-bit: rounding order differs
  for (size_t i = 0; i < gpu.size(); ++i)
    EXPECT_NEAR(gpu[i], cpu[i], tolerance * std::max(1.0, std::abs(cpu[i]))) << "step " << i + 1;
  EXPECT_EQ(losses_of(cuda_plan, true), gpu) << "CUDA Graph replay differs from the eager run";
}

INSTANTIATE_TEST_SUITE_P(Precisions, CudaTraining, ::testing::Values("fp32", "bf16", "fp16"));

}  // namespace
}  // namespace dlc
