// Binding plans to CUDA (codegen/cuda/plan_kernels.h, step_binding.h) without NVRTC: the parity
// models' training plans get every step bound, each distinct kernel source is compiled once, and
// the load-time checks (runtime/plan/cuda_steps.h) reject corrupt bindings. The NVRTC compile of
// the same models is tests/cli/cuda_compile.py.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "codegen/cuda/plan_kernels.h"
#include "codegen/cuda/step_binding.h"
#include "dlc/error.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "tools/driver/train_compile.h"

namespace dlc {
namespace {

using codegen::cuda::CompiledKernel;
using codegen::cuda::KernelSource;

// A training plan of a parity model, lowered for the CPU and then moved to cuda:0.
plan::Plan cuda_training_plan(const std::string& model, int64_t batch) {
  driver::TrainCompileOptions options;
  options.compile.import.batch = batch;
  options.optimizer.kind = "adam";
  plan::Plan p = driver::compile_training(
                     std::string(DLC_SOURCE_DIR) + "/tests/parity/data/" + model + "/model.onnx", options)
                     .plan;
  for (plan::Stage& st : *p.mutable_stages()) st.set_device("cuda:0");
  return p;
}

// Stands in for NVRTC: counts compilations per source and returns a fake cubin.
struct FakeCompiler {
  std::map<std::string, int> compiles;  // source text -> times compiled

  codegen::cuda::KernelCompiler fn() {
    return [this](const KernelSource& s) {
      ++compiles[s.source];
      CompiledKernel k{"key-" + s.name, "cubin of " + s.name, "", {}};
      for (const std::string& n : s.kernel_names()) k.lowered_names.push_back("lowered_" + n);
      return k;
    };
  }
};

class CudaPlanModels : public ::testing::TestWithParam<std::pair<std::string, int64_t>> {};

TEST_P(CudaPlanModels, EveryStepBoundAndKernelsStoredOnce) {
  plan::Plan p = cuda_training_plan(GetParam().first, GetParam().second);
  FakeCompiler compiler;
  const codegen::cuda::CudaBindStats stats = codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());

  // Each distinct source compiled exactly once and stored once.
  EXPECT_EQ(int64_t(compiler.compiles.size()), stats.kernels);
  for (const auto& [source, n] : compiler.compiles) EXPECT_EQ(n, 1);
  EXPECT_EQ(p.cuda_kernels_size(), stats.kernels);
  std::set<std::string> names;
  for (const plan::CudaKernel& k : p.cuda_kernels()) {
    EXPECT_EQ(k.arch(), "sm_90");
    EXPECT_EQ(k.cubin(), "cubin of " + k.name());
    names.insert(k.name());
  }
  EXPECT_EQ(int64_t(names.size()), stats.kernels) << "two stored kernels with one name";

  // Every step bound; the plan passes the load-time checks; the counts add up.
  int64_t steps = 0;
  for (const plan::Step& step : p.stages(0).steps()) {
    ++steps;
    ASSERT_TRUE(step.has_cuda()) << step.name();
    EXPECT_NE(step.cuda().kind(), plan::CudaStep::UNBOUND) << step.name();
  }
  EXPECT_EQ(stats.kernel_steps + stats.library_calls + stats.host_steps, steps);
  EXPECT_NO_THROW(plan::validate_plan(p, "plan"));
  const plan::CudaStepCounts counts = plan::count_cuda_steps(p);
  EXPECT_EQ(counts.generated_kernels, stats.kernels);
  EXPECT_EQ(counts.kernel_steps, stats.kernel_steps);
  EXPECT_EQ(counts.library_calls, stats.library_calls);

  // Every parameter's AdamUpdate launches the same kernel: fewer kernels than kernel steps.
  EXPECT_LT(stats.kernels, stats.kernel_steps);
  std::set<int32_t> adam_kernels;
  for (const plan::Step& step : p.stages(0).steps())
    if (step.kernel() == "AdamUpdate") adam_kernels.insert(step.cuda().kernel());
  EXPECT_EQ(adam_kernels.size(), 1u);
  EXPECT_GT(stats.library_calls, 0) << "MatMul / Conv are library calls";
}

INSTANTIATE_TEST_SUITE_P(Parity, CudaPlanModels,
                         ::testing::Values(std::make_pair(std::string("mlp"), int64_t(16)),
                                           std::make_pair(std::string("cnn"), int64_t(8)),
                                           std::make_pair(std::string("transformer"), int64_t(8))),
                         [](const auto& info) { return info.param.first; });

TEST(CudaPlan, LibraryCallsRecordTheCallAndShapes) {
  plan::Plan p = cuda_training_plan("cnn", 8);
  FakeCompiler compiler;
  codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());
  std::map<std::string, std::string> call_of;
  for (const plan::Step& step : p.stages(0).steps())
    if (step.cuda().kind() == plan::CudaStep::LIBRARY) call_of[step.kernel()] = step.cuda().call();
  EXPECT_EQ(call_of["Conv"], "cudnn.convolution_forward");
  EXPECT_EQ(call_of["ConvGradFilter"], "cudnn.convolution_backward_filter");
  EXPECT_EQ(call_of["MatMul"], "cublasLt.matmul");
  EXPECT_EQ(call_of["BatchNormalization"], "cudnn.batch_norm_forward_training");
  EXPECT_EQ(call_of["MaxPoolGrad"], "cudnn.pooling_backward");
  for (const plan::Step& step : p.stages(0).steps())
    if (step.kernel() == "Conv") {
      bool has_dims = false;
      for (const plan::Attribute& a : step.cuda().params()) has_dims = has_dims || a.name() == "input1_dims";
      EXPECT_TRUE(has_dims) << "the filter's dims are a parameter of the call";
    }
}

TEST(CudaPlan, OpWithoutCudaPathNamesStepAndOp) {
  plan::Plan p = cuda_training_plan("mlp", 16);
  plan::Step* step = p.mutable_stages(0)->mutable_steps(0);
  step->set_kernel("Sin");
  step->set_name("my_node");
  FakeCompiler compiler;
  try {
    codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 'my_node' (op Sin) has no CUDA path"), std::string::npos)
        << e.what();
  }
}

class CudaPlanValidation : public ::testing::Test {
 protected:
  void SetUp() override {
    p = cuda_training_plan("mlp", 16);
    FakeCompiler compiler;
    codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());
    for (int i = 0; i < p.stages(0).steps_size(); ++i)
      if (p.stages(0).steps(i).cuda().kind() == plan::CudaStep::KERNEL) kernel_step = i;
    ASSERT_GE(kernel_step, 0);
  }
  plan::CudaStep* cuda_of(int i) { return p.mutable_stages(0)->mutable_steps(i)->mutable_cuda(); }
  void expect_invalid(const std::string& message) {
    try {
      plan::validate_plan(p, "plan");
      FAIL() << "expected: " << message;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }

  plan::Plan p;
  int kernel_step = -1;
};

TEST_F(CudaPlanValidation, KernelIndexOutOfRange) {
  cuda_of(kernel_step)->set_kernel(p.cuda_kernels_size());
  expect_invalid("uses CUDA kernel");
  cuda_of(kernel_step)->set_kernel(-1);
  expect_invalid("uses CUDA kernel -1");
}

TEST_F(CudaPlanValidation, LaunchesMustMatchEntries) {
  cuda_of(kernel_step)->add_launches();
  expect_invalid("launches for the");
}

TEST_F(CudaPlanValidation, BadLaunchConfig) {
  cuda_of(kernel_step)->mutable_launches(0)->set_block(0, 2048);
  expect_invalid("invalid block size 2048");
}

TEST_F(CudaPlanValidation, UnboundStep) {
  p.mutable_stages(0)->mutable_steps(0)->clear_cuda();
  expect_invalid("is not bound");
}

TEST_F(CudaPlanValidation, KernelWithoutCubin) {
  p.mutable_cuda_kernels(0)->clear_cubin();
  expect_invalid("has no cubin");
}

TEST_F(CudaPlanValidation, BindingInACpuStage) {
  p.mutable_stages(0)->set_device("cpu");
  expect_invalid("of a CPU stage has a CUDA binding");
}

TEST_F(CudaPlanValidation, UnknownDevice) {
  p.mutable_stages(0)->set_device("tpu");
  expect_invalid("neither cpu nor cuda");
}

}  // namespace
}  // namespace dlc
