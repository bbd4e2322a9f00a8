// Binding plans to CUDA (codegen/cuda/plan_kernels.h, step_binding.h) without NVRTC: the parity
// models' training plans get every step bound, each distinct kernel source is compiled once, and
// the load-time checks (runtime/plan/cuda_steps.h) reject corrupt bindings. The NVRTC compile of
// the same models is tests/cli/cuda_compile.py.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "codegen/cuda/multi_tensor.h"
#include "codegen/cuda/optimizer_emitter.h"
#include "codegen/cuda/plan_kernels.h"
#include "codegen/cuda/step_binding.h"
#include "codegen/lower.h"
#include "dlc/error.h"
#include "dlc/multi_tensor_update.h"
#include "ir/graph.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "runtime/plan/plan_values.h"
#include "tests/unit/source_dir.h"
#include "tools/driver/train_compile.h"

namespace dlc {
namespace {

using codegen::cuda::CompiledKernel;
using codegen::cuda::KernelSource;

// The training plan of a parity model under `options`, lowered for the CPU and then moved to cuda:0
// (without the CPU plans' conv-bias-grad pass, which a CUDA compile does not run).
plan::Plan cuda_plan_of(const std::string& model, driver::TrainCompileOptions options) {
  options.compile.pipeline.disabled.push_back("conv-bias-grad");
  plan::Plan p = driver::compile_training(test::parity_dir(model) + "/model.onnx", options).plan;
  for (plan::Stage& st : *p.mutable_stages()) st.set_device("cuda:0");
  return p;
}

// With Adam in `precision` (fp32, bf16, fp16).
plan::Plan cuda_training_plan(const std::string& model, int64_t batch,
                              const std::string& precision = "fp32") {
  driver::TrainCompileOptions options;
  options.compile.import.batch = batch;
  options.optimizer.kind = "adam";
  options.precision = precision;
  return cuda_plan_of(model, options);
}

// Stands in for NVRTC: counts compilations per source and returns a fake cubin (called from
// several threads at once, as NVRTC is).
struct FakeCompiler {
  std::mutex mutex;
  std::map<std::string, int> compiles;  // source text -> times compiled

  codegen::cuda::KernelCompiler fn() {
    return [this](const KernelSource& s) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++compiles[s.source];
      }
      CompiledKernel k{"key-" + s.name, "cubin of " + s.name, "", {}};
      for (const std::string& n : s.kernel_names()) k.lowered_names.push_back("lowered_" + n);
      return k;
    };
  }
};

struct ModelCase {
  std::string model;
  int64_t batch;
  std::string precision;
};

class CudaPlanModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(CudaPlanModels, EveryStepBoundAndKernelsStoredOnce) {
  plan::Plan p = cuda_training_plan(GetParam().model, GetParam().batch, GetParam().precision);
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

  // The fusion pass merged every parameter's AdamUpdate into one MultiTensorUpdate step: one
  // multi-tensor launch whose table has an entry per parameter (its grid covers their chunks).
  EXPECT_LE(stats.kernels, stats.kernel_steps);
  int merged_steps = 0;
  for (const plan::Step& step : p.stages(0).steps()) {
    EXPECT_NE(step.kernel(), "AdamUpdate") << step.name() << " was not merged";
    if (step.kernel() != "MultiTensorUpdate") continue;
    ++merged_steps;
    // lr, step, apply (absent without a gate), then param, grad, m, v per tensor.
    const MultiTensorLayout& adam = *find_multi_tensor_layout("AdamUpdate");
    const int tensors = adam.tensors(step.inputs_size(), step.outputs_size());
    std::vector<codegen::cuda::MultiTensorEntry> entries;
    for (int k = 0; k < tensors; ++k) {
      codegen::cuda::MultiTensorEntry e;
      e.n = num_elements(plan::buffer_type(p.stages(0).buffers(step.inputs(adam.merged_input(k, 0)))).shape);
      entries.push_back(e);
    }
    EXPECT_GT(entries.size(), 1u);
    ASSERT_EQ(step.cuda().launches_size(), 1);
    EXPECT_EQ(step.cuda().launches(0).grid(0),
              codegen::cuda::multi_tensor_grid(codegen::cuda::assign_chunks(entries)));
    // Tensor k's row points at its results param', m', v' (first copied from param, m, v) and at
    // its gradient; lr, step and apply are the shared scalars.
    ASSERT_EQ(size_t(step.cuda().table_size()), entries.size());
    ASSERT_EQ(size_t(step.cuda().copies_size()), 3 * entries.size());
    for (int k = 0; k < int(entries.size()); ++k) {
      const plan::CudaTableRow& row = step.cuda().table(k);
      const std::vector<std::pair<plan::CudaOperand::Kind, int>> want = {
          {plan::CudaOperand::OUTPUT, adam.merged_output(k, 0)},
          {plan::CudaOperand::INPUT, adam.merged_input(k, 1)},
          {plan::CudaOperand::OUTPUT, adam.merged_output(k, 1)},
          {plan::CudaOperand::OUTPUT, adam.merged_output(k, 2)}};
      for (int slot = 0; slot < 4; ++slot) {
        EXPECT_EQ(row.slots(slot).kind(), want[size_t(slot)].first) << "tensor " << k << " slot " << slot;
        EXPECT_EQ(row.slots(slot).index(), want[size_t(slot)].second) << "tensor " << k << " slot " << slot;
      }
      for (int j = 0; j < 3; ++j) {
        const plan::CudaCopy& c = step.cuda().copies(3 * k + j);
        EXPECT_EQ(c.input(), adam.merged_input(k, j == 0 ? 0 : j + 1));
        EXPECT_EQ(c.output(), adam.merged_output(k, j));
      }
    }
    std::map<std::string, int> input_of_arg;
    for (const plan::CudaArg& a : step.cuda().args()) input_of_arg[a.param()] = a.operand().index();
    EXPECT_EQ(input_of_arg.at("lr"), 0);
    EXPECT_EQ(input_of_arg.at("step"), 1);
    // fp16's update gate (loss scaling) is the apply operand; the other precisions have none.
    const int apply = adam.merged_input(0, adam.apply_input());
    const bool gated = step.inputs(apply) >= 0;
    EXPECT_EQ(gated, GetParam().precision == "fp16");
    if (gated) {
      EXPECT_EQ(input_of_arg.at("apply"), apply);
    }
  }
  EXPECT_EQ(merged_steps, 1);
  EXPECT_GT(stats.library_calls, 0) << "MatMul / Conv are library calls";
}

// Per parameter of `entry` in `source`, in order: whether it is a const pointer (read only), a
// written pointer, or passed by value (nullopt).
std::vector<std::optional<bool>> parameter_access(const std::string& source, const std::string& entry) {
  const size_t at = source.find(entry + "(");
  if (at == std::string::npos) throw Error("no kernel " + entry + " in its source");
  const size_t open = at + entry.size() + 1, close = source.find(')', open);
  std::vector<std::optional<bool>> access;
  std::stringstream list(source.substr(open, close - open));
  for (std::string p; std::getline(list, p, ',');)
    access.push_back(p.find('*') == std::string::npos
                         ? std::nullopt
                         : std::optional<bool>(p.find("const") != std::string::npos));
  return access;
}

// Every generated kernel's parameters are bound to operands in the direction the kernel uses them:
// a const pointer (read) to an input, a written one to an output, checked against the kernel
// sources themselves (the entry's parameter i is the source's parameter i).
TEST_P(CudaPlanModels, KernelArgumentsReadInputsAndWriteOutputs) {
  plan::Plan p = cuda_training_plan(GetParam().model, GetParam().batch, GetParam().precision);
  std::map<std::string, std::string> source_of;  // kernel name -> source
  std::mutex mutex;
  codegen::cuda::bind_cuda_plan(p, "sm_90", [&](const KernelSource& s) {
    std::lock_guard<std::mutex> lock(mutex);
    source_of[s.name] = s.source;
    CompiledKernel k{"key", "cubin", "", {}};
    for (const std::string& n : s.kernel_names()) k.lowered_names.push_back(n);
    return k;
  });
  int checked = 0;
  for (const plan::Step& step : p.stages(0).steps()) {
    if (step.cuda().kind() != plan::CudaStep::KERNEL) continue;
    const plan::CudaKernel& kernel = p.cuda_kernels(step.cuda().kernel());
    std::map<std::string, plan::CudaOperand> operand_of;
    for (const plan::CudaArg& a : step.cuda().args()) operand_of[a.param()] = a.operand();
    for (const plan::CudaKernelEntry& e : kernel.entries()) {
      const std::vector<std::optional<bool>> access = parameter_access(source_of.at(kernel.name()), e.name());
      ASSERT_EQ(access.size(), size_t(e.params_size())) << e.name();
      for (int i = 0; i < e.params_size(); ++i) {
        const std::string& param = e.params(i);
        if (plan::is_runtime_kernel_param(param)) continue;
        ASSERT_TRUE(operand_of.count(param)) << step.name() << ": " << param;
        ASSERT_TRUE(access[size_t(i)].has_value()) << e.name() << ": " << param << " is passed by value";
        const plan::CudaOperand& o = operand_of[param];
        if (o.kind() == plan::CudaOperand::NONE) continue;
        EXPECT_EQ(o.kind(), *access[size_t(i)] ? plan::CudaOperand::INPUT : plan::CudaOperand::OUTPUT)
            << step.name() << " (" << step.kernel() << "): " << e.name() << " parameter " << param;
        EXPECT_GE(plan::operand_buffer(step, o), 0)
            << step.name() << ": " << param << " points at an absent operand";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 5);
}

std::vector<ModelCase> model_cases() {
  std::vector<ModelCase> v;
  for (const char* precision : {"fp32", "bf16", "fp16"})
    for (const auto& [model, batch] : {std::pair<const char*, int64_t>{"mlp", 16},
                                       {"cnn", 8},
                                       {"cnn_bias", 8},
                                       {"resnet", 8},
                                       {"transformer", 8}})
      v.push_back({model, batch, precision});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Parity, CudaPlanModels, ::testing::ValuesIn(model_cases()),
                         [](const auto& info) { return info.param.model + "_" + info.param.precision; });

// fp16's dynamic loss scaling (passes/loss_scaling.h) runs on the GPU too: the inverse scale, the
// all-finite check and the scale update are elementwise kernels, the non-finite sums reductions
// (ReduceSum, or fused with their producers).
TEST(CudaPlan, LossScalingStepsAreGeneratedKernels) {
  plan::Plan p = cuda_training_plan("mlp", 16, "fp16");
  FakeCompiler compiler;
  codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());
  std::set<std::string> ops;
  for (const plan::Step& step : p.stages(0).steps())
    if (step.name().rfind("loss_scaling", 0) == 0 || step.name().rfind("fused.loss_scaling", 0) == 0) {
      EXPECT_EQ(step.cuda().kind(), plan::CudaStep::KERNEL) << step.name() << " (" << step.kernel() << ")";
      ops.insert(step.kernel());
    }
  for (const char* op : {"Reciprocal", "Equal", "GreaterOrEqual"})
    EXPECT_TRUE(ops.count(op)) << "no loss-scaling step runs " << op;
}

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

// What the cuDNN calls need beyond the attributes: the pooling mode, the inputs' dtypes (batch
// norm's parameters must be f32), and the copies that start the running statistics' results as
// the statistics (cuDNN updates them in place).
void expect_cudnn_parameters(plan::Plan p) {
  FakeCompiler compiler;
  codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());
  int pools = 0, norms = 0;
  for (const plan::Step& step : p.stages(0).steps()) {
    const Attrs params = plan::from_proto(step.cuda().params(), step.name());
    if (step.kernel() == "MaxPool" || step.kernel() == "MaxPoolGrad") {
      EXPECT_EQ(params.s("mode", ""), "max") << step.name();
      ++pools;
    }
    if (step.kernel() != "BatchNormalization") continue;
    ++norms;
    EXPECT_EQ(params.s("input1_dtype", ""), "f32") << step.name();
    EXPECT_EQ(params.i("running_var_unbiased", 0), 1)
        << step.name() << ": cuDNN's running variance is unbiased";
    std::vector<std::pair<int, int>> copies;
    for (const plan::CudaCopy& c : step.cuda().copies()) copies.emplace_back(c.input(), c.output());
    EXPECT_EQ(copies, (std::vector<std::pair<int, int>>{{3, 1}, {4, 2}})) << step.name();
  }
  EXPECT_EQ(pools, 4) << "two MaxPools and their gradients";
  EXPECT_GT(norms, 0);
}

TEST(CudaPlan, CudnnCallsRecordModeDtypesAndRunningStatisticCopies) {
  for (const char* precision : {"fp32", "bf16"}) {
    SCOPED_TRACE(precision);
    expect_cudnn_parameters(cuda_training_plan("cnn", 8, precision));
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

// With the host fallback, that step runs on the host by its CPU kernel and says why; the others
// bind as before.
TEST(CudaPlan, HostFallbackRunsStepWithoutCudaPathByItsCpuKernel) {
  plan::Plan p = cuda_training_plan("mlp", 16);
  plan::Step* step = p.mutable_stages(0)->mutable_steps(0);
  step->set_kernel("Sin");
  step->set_name("my_node");
  std::string why;  // the refusal's reason
  try {
    codegen::cuda::bind_cuda_step(p, p.stages(0), 0);
  } catch (const codegen::cuda::NoCudaPathError& e) {
    why = e.why;
  }
  ASSERT_FALSE(why.empty()) << "expected a refusal";
  FakeCompiler compiler;
  const codegen::cuda::CudaBindStats stats =
      codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn(), 0, codegen::cuda::HostFallback::CpuKernel);
  const plan::CudaStep& c = p.stages(0).steps(0).cuda();
  EXPECT_EQ(c.kind(), plan::CudaStep::HOST);
  EXPECT_EQ(c.call(), "cpu");
  EXPECT_EQ(c.host_reason(), why);
  EXPECT_EQ(stats.host_kernel_steps, 1);
  EXPECT_EQ(stats.kernel_steps + stats.library_calls + stats.host_steps + stats.host_kernel_steps,
            p.stages(0).steps_size());
  const plan::CudaStepCounts counts = plan::count_cuda_steps(p);
  EXPECT_EQ(counts.host_kernel_steps, 1);
  EXPECT_EQ(counts.host_steps, stats.host_steps);
  EXPECT_NO_THROW(plan::validate_cuda_steps(p, "plan"));
  for (int i = 1; i < p.stages(0).steps_size(); ++i)
    EXPECT_NE(p.stages(0).steps(i).cuda().call(), "cpu") << p.stages(0).steps(i).name();
}

// RMSprop's updates (single or merged) run the multi-tensor RMSprop kernel, with the momentum
// buffer or (centered) the gradient average as the second state; centered with momentum (three
// states) has no kernel and says so.
TEST(CudaPlan, RmspropUpdatesAreGeneratedKernels) {
  driver::TrainCompileOptions options;
  options.compile.import.batch = 16;
  options.optimizer.kind = "rmsprop";
  for (const auto& [centered, momentum] :
       {std::pair{false, 0.9}, std::pair{true, 0.0}, std::pair{false, 0.0}}) {
    options.optimizer.centered = centered;
    options.optimizer.momentum = momentum;
    plan::Plan p = cuda_plan_of("mlp", options);
    FakeCompiler compiler;
    codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());
    int updates = 0;
    for (const plan::Step& step : p.stages(0).steps())
      if (step.kernel() == "RmspropUpdate" || step.kernel() == "MultiTensorUpdate") {
        ASSERT_EQ(step.cuda().kind(), plan::CudaStep::KERNEL) << step.name();
        EXPECT_EQ(p.cuda_kernels(step.cuda().kernel()).kind(), "rmsprop_update") << step.name();
        ++updates;
      }
    EXPECT_GT(updates, 0) << "centered " << centered << " momentum " << momentum;
  }
  options.optimizer.centered = true;
  options.optimizer.momentum = 0.9;
  plan::Plan p = cuda_plan_of("mlp", options);
  FakeCompiler compiler;
  try {
    codegen::cuda::bind_cuda_plan(p, "sm_90", compiler.fn());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no CUDA path: CUDA RMSprop: centered with momentum"),
              std::string::npos)
        << e.what();
  }
}

// Dropout (with the step as its offset and a mask), Slice, Pad and Concat bind to generated
// kernels; Dropout's kernel embeds the CPU's Philox code.
TEST(CudaPlan, DropoutAndCopiesAreGeneratedKernels) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F16, {8, 6}});
  ir::Value* step = g.add_input("step", {DType::I64, {}});
  Attrs drop;
  drop.set("ratio", 0.1);
  drop.set("seed", int64_t(3));
  ir::Node* d = g.add_node(ir::OpKind::Dropout, {x, step}, drop, {"y", "mask"});
  Attrs slice;
  slice.set("starts", std::vector<int64_t>{5});
  slice.set("ends", std::vector<int64_t>{0});
  slice.set("axes", std::vector<int64_t>{1});
  slice.set("steps", std::vector<int64_t>{-1});
  ir::Value* s = g.add_node(ir::OpKind::Slice, {d->outputs[0]}, slice)->outputs[0];
  Attrs pad;
  pad.set("pads", std::vector<int64_t>{0, 1, 0, 0});
  pad.set("mode", std::string("reflect"));
  ir::Value* p = g.add_node(ir::OpKind::Pad, {s}, pad)->outputs[0];
  Attrs concat;
  concat.set("axis", int64_t(0));
  ir::Value* c = g.add_node(ir::OpKind::Concat, {p, d->outputs[0]}, concat)->outputs[0];
  Attrs perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  g.add_output(g.add_node(ir::OpKind::Transpose, {c}, perm)->outputs[0]);
  g.add_output(d->outputs[1]);
  plan::Plan plan = codegen::lower_to_plan(g);
  plan.mutable_stages(0)->set_device("cuda:0");
  FakeCompiler compiler;
  const codegen::cuda::CudaBindStats stats = codegen::cuda::bind_cuda_plan(plan, "sm_90", compiler.fn());
  EXPECT_EQ(stats.kernel_steps, 5);
  std::map<std::string, std::string> kind_of;
  for (const plan::Step& step : plan.stages(0).steps()) {
    ASSERT_EQ(step.cuda().kind(), plan::CudaStep::KERNEL) << step.kernel();
    kind_of[step.kernel()] = plan.cuda_kernels(step.cuda().kernel()).kind();
  }
  EXPECT_EQ(kind_of["Dropout"], "dropout");
  EXPECT_EQ(kind_of["Slice"], "copy");
  EXPECT_EQ(kind_of["Pad"], "copy");
  EXPECT_EQ(kind_of["Concat"], "copy");
  EXPECT_EQ(kind_of["Transpose"], "copy");
  int dropout_sources = 0;
  for (const auto& [source, n] : compiler.compiles) {
    if (source.find("dlc_dropout") == std::string::npos) continue;
    ++dropout_sources;
    EXPECT_NE(source.find("philox4x32_10"), std::string::npos) << "the CPU's Philox code is embedded";
  }
  EXPECT_EQ(dropout_sources, 1);
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

TEST_F(CudaPlanValidation, KernelParameterWithoutOperand) {
  cuda_of(kernel_step)->mutable_args()->RemoveLast();
  expect_invalid("is bound to no operand");
}

TEST_F(CudaPlanValidation, ArgumentOperandOutOfRange) {
  cuda_of(kernel_step)->mutable_args(0)->mutable_operand()->set_kind(plan::CudaOperand::OUTPUT);
  cuda_of(kernel_step)->mutable_args(0)->mutable_operand()->set_index(99);
  expect_invalid("refers to output 99, which it lacks");
}

TEST_F(CudaPlanValidation, MultiTensorTableWhereTheKernelReadsOne) {
  int plain_step = 0;
  while (p.stages(0).steps(plain_step).cuda().kind() != plan::CudaStep::KERNEL ||
         p.stages(0).steps(plain_step).cuda().table_size() > 0)
    ++plain_step;
  cuda_of(plain_step)->add_table();
  expect_invalid("multi-tensor table rows for a kernel that reads no one");
}

TEST_F(CudaPlanValidation, CopyOfAnAbsentOperand) {
  plan::CudaCopy* c = cuda_of(kernel_step)->add_copies();
  c->set_input(0);
  c->set_output(99);
  expect_invalid("copies input 0 to output 99");
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
// Kernels compile on several threads; the plan is the serial one byte for byte, even when the
// compiles end in another order (the first source is made the slowest).
TEST(CudaPlan, ParallelCompilesGiveTheSerialPlan) {
  const plan::Plan lowered = cuda_training_plan("transformer", 16);
  std::string first;
  const auto slow_first = [&first](const KernelSource& s) {
    if (s.name == first) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CompiledKernel k{"key-" + s.name, "cubin of " + s.name, "", {}};
    for (const std::string& n : s.kernel_names()) k.lowered_names.push_back("lowered_" + n);
    return k;
  };
  plan::Plan serial = lowered, parallel = lowered;
  codegen::cuda::bind_cuda_plan(serial, "sm_90", slow_first, 1);
  ASSERT_GT(serial.cuda_kernels_size(), 4);
  first = serial.cuda_kernels(0).name();
  codegen::cuda::bind_cuda_plan(parallel, "sm_90", slow_first, 4);
  EXPECT_EQ(parallel.SerializeAsString(), serial.SerializeAsString());

  // Every compile fails: the error is the first source's, not the first to finish.
  plan::Plan failing = lowered;
  try {
    codegen::cuda::bind_cuda_plan(
        failing, "sm_90",
        [&](const KernelSource& s) -> CompiledKernel {
          slow_first(s);
          throw Error("cannot compile " + s.name);
        },
        4);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot compile " + first);
  }
}

}  // namespace dlc
