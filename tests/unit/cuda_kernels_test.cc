// The generated CUDA kernels against the CPU kernels (the reference) on the same inputs, for f32,
// f16 and bf16 storage: inputs are rounded to the storage type, the reference runs in f32 on the
// rounded values, and results are compared with a tolerance per storage type. In dlc_cuda_tests
// every test skips with "no CUDA device" where no GPU is present (scripts/gpu_check.sh runs them on
// a GPU); dlc_emulated_gpu_tests builds this file again with the host as the device
// (tests/emulation/emulated_device.h) and runs the same kernels emulated, everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "codegen/cuda/activation_programs.h"
#include "codegen/cuda/arg_extremum_emitter.h"
#include "codegen/cuda/attention_emitter.h"
#include "codegen/cuda/broadcast_layout.h"
#include "codegen/cuda/multi_tensor.h"
#include "tests/emulation/op_cases.h"
#include "tests/unit/cuda_kernel_cases.h"
#include "tests/unit/cuda_test_util.h"

namespace dlc::cuda::test {
namespace {

using namespace dlc::codegen::cuda;  // NOLINT: the emitters under test
using dlc::codegen::cuda::test::all_ops_program;
using dlc::codegen::cuda::test::bias_relu_program;
using dlc::codegen::cuda::test::fused_reduce_program;
using dlc::codegen::cuda::test::math_ops_program;
using dlc::codegen::cuda::test::reduce_view;

class CudaKernels : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
  DType dtype() const { return GetParam(); }
  // A random tensor of the storage dtype, and its values as f32 for the reference.
  Tensor random(const Shape& dims, uint32_t seed, double lo = -1.0, double hi = 1.0) const {
    return make(dtype(), dims, random_values(num_elements(dims), seed, lo, hi));
  }
};

void* ptr(const DeviceBuffer& b) { return b.get(); }

// ---- elementwise

// `src` (dims `from`) broadcast to `to`, as f32.
Tensor expand(const Tensor& src, const Shape& to) {
  Tensor f = to_f32(src);
  Tensor out(TensorType{DType::F32, to});
  run_cpu("Expand", Attrs{}, {&f}, {&out});
  return out;
}

// The program evaluated with one CPU kernel per instruction on f32 tensors of the program's dims.
std::vector<Tensor> reference_program(const ExprProgram& p, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> v;
  const TensorType full{DType::F32, p.dims};
  auto cpu_op = [&](const std::string& kernel, std::vector<Tensor*> in, const Attrs& attrs = {}) {
    Tensor out(full);
    run_cpu(kernel, attrs, in, {&out});
    return out;
  };
  for (const ExprInstr& i : p.instrs) {
    auto arg = [&](size_t k) { return &v[size_t(i.args[k])]; };
    switch (i.op) {
      case ExprOp::Input:
        v.push_back(expand(inputs[size_t(i.input)], p.dims));
        break;
      case ExprOp::Constant:
        v.push_back(make(DType::F32, p.dims, std::vector<double>(size_t(num_elements(p.dims)), i.value)));
        break;
      case ExprOp::Where: {
        Tensor cond(TensorType{DType::Bool, p.dims});
        run_cpu("Cast", Attrs{}, {arg(0)}, {&cond});
        v.push_back(cpu_op("Where", {&cond, arg(1), arg(2)}));
        break;
      }
      case ExprOp::Cast: {
        Tensor narrow(TensorType{i.to, p.dims});
        run_cpu("Cast", Attrs{}, {arg(0)}, {&narrow});
        v.push_back(cpu_op("Cast", {&narrow}));
        break;
      }
      case ExprOp::Equal:
      case ExprOp::Greater:
      case ExprOp::GreaterOrEqual:
      case ExprOp::Less:
      case ExprOp::LessOrEqual: {  // the CPU kernel's result is bool
        Tensor flag(TensorType{DType::Bool, p.dims});
        run_cpu(std::string(expr_op_name(i.op)), Attrs{}, {arg(0), arg(1)}, {&flag});
        v.push_back(cpu_op("Cast", {&flag}));
        break;
      }
      case ExprOp::Clip: {  // the bounds are constants here: scalars for the CPU kernel
        Tensor lo = make(DType::F32, {}, {arg(1)->as_double()[0]});
        Tensor hi = make(DType::F32, {}, {arg(2)->as_double()[0]});
        v.push_back(cpu_op("Clip", {arg(0), &lo, &hi}));
        break;
      }
      default: {
        std::vector<Tensor*> in;
        for (size_t k = 0; k < i.args.size(); ++k) in.push_back(arg(k));
        v.push_back(cpu_op(std::string(expr_op_name(i.op)), in));
      }
    }
  }
  std::vector<Tensor> outs;
  for (const ExprOutput& o : p.outputs) outs.push_back(v[size_t(o.value)]);
  return outs;
}

// Runs `p` on the GPU with inputs at `offset` elements into their buffers (1: misaligned, the
// one-element path) and compares every output with the reference.
void check_program(const ExprProgram& p, const std::vector<Tensor>& inputs, int64_t offset) {
  const KernelSource ks = emit_elementwise(p);
  std::vector<DeviceBuffer> buffers;
  Args args;
  auto bind = [&](const std::string& name, const Tensor& t) {
    Tensor padded(TensorType{t.type.dtype, {t.type.numel() + offset}});
    std::memcpy(padded.bytes.data() + offset * int64_t(dtype_size(t.type.dtype)), t.bytes.data(),
                t.bytes.size());
    buffers.push_back(upload(padded));
    args[name] = static_cast<void*>(buffers.back().as<char>() + offset * int64_t(dtype_size(t.type.dtype)));
  };
  for (size_t k = 0; k < p.inputs.size(); ++k) bind(p.inputs[k].name, inputs[k]);
  std::vector<size_t> out_index;
  for (const ExprOutput& o : p.outputs) {
    out_index.push_back(buffers.size());
    bind(o.name, Tensor(TensorType{o.dtype, p.dims}));
  }
  run_kernels(ks, args);
  const std::vector<Tensor> want = reference_program(p, inputs);
  // A rounding step (a Cast, a 16-bit operand) can flip by one unit of its type between two f32
  // computations of the same value: compare at the coarsest type the program touches.
  DType coarsest = DType::F32;
  auto coarser = [&](DType t) {
    if (t == DType::BF16 || (t == DType::F16 && coarsest == DType::F32)) coarsest = t;
  };
  for (const ExprInput& in : p.inputs) coarser(in.dtype);
  for (const ExprInstr& i : p.instrs)
    if (i.op == ExprOp::Cast) coarser(i.to);
  for (const ExprOutput& o : p.outputs) coarser(o.dtype);
  for (size_t k = 0; k < p.outputs.size(); ++k) {
    Tensor padded =
        download(buffers[out_index[k]], TensorType{p.outputs[k].dtype, {num_elements(p.dims) + offset}});
    Tensor got(TensorType{p.outputs[k].dtype, p.dims});
    std::memcpy(got.bytes.data(), padded.bytes.data() + offset * int64_t(dtype_size(got.type.dtype)),
                got.bytes.size());
    expect_close(got, want[k], coarsest, ks.name + " output " + p.outputs[k].name);
  }
}

TEST_P(CudaKernels, ElementwiseBiasRelu) {
  const ExprProgram p = bias_relu_program(dtype(), 96, 256);
  const std::vector<Tensor> inputs = {random({96, 256}, 1), random({256}, 2)};
  check_program(p, inputs, 0);  // 4-wide path
  check_program(p, inputs, 1);  // misaligned: one element a thread
}

TEST_P(CudaKernels, ElementwiseMathOps) {
  const ExprProgram p = math_ops_program(dtype());
  check_program(p, {random({6, 7}, 9)}, 0);
}

// The activations with attributes (activation_programs.h) against their CPU kernels.
TEST_P(CudaKernels, ActivationsWithAttributes) {
  for (const char* op :
       {"LeakyRelu", "PRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu", "Mish"}) {
    const bool prelu = std::string(op) == "PRelu";
    const Tensor x = random({8, 33}, 21, -4.0, 4.0), slope = random({33}, 22);
    ExprProgram p({8, 33});
    std::vector<int> operands = {p.input("x", dtype(), {8, 33})};
    if (prelu) operands.push_back(p.input("slope", dtype(), {33}));
    p.output("y", activation_expr(p, op, {}, operands), dtype());
    Args args;
    DeviceBuffer dx = upload(x), dslope = upload(slope), dy(x.bytes.size());
    args["x"] = ptr(dx);
    args["slope"] = ptr(dslope);
    args["y"] = ptr(dy);
    run_kernels(emit_elementwise(p), args);
    Tensor xf = to_f32(x), sf = expand(slope, {8, 33}), want(TensorType{DType::F32, {8, 33}});
    std::vector<Tensor*> in = {&xf};
    if (prelu) in.push_back(&sf);
    run_cpu(op, {}, in, {&want});
    expect_close(download(dy, x.type), want, dtype(), op);
  }
}

TEST_P(CudaKernels, ElementwiseEveryOp) {
  const ExprProgram p = all_ops_program(dtype());
  std::vector<Tensor> inputs;
  uint32_t seed = 10;
  for (const ExprInput& in : p.inputs) {
    if (in.dtype == DType::Bool) {
      std::vector<double> bits;
      for (int64_t i = 0; i < num_elements(in.dims); ++i) bits.push_back(double(i % 3 != 0));
      inputs.push_back(make(DType::Bool, in.dims, bits));
    } else {
      inputs.push_back(make(in.dtype, in.dims, random_values(num_elements(in.dims), seed++, -2.0, 2.0)));
    }
  }
  check_program(p, inputs, 0);
}

// ---- reductions

TEST_P(CudaKernels, Reductions) {
  struct Case {
    ReduceOp op;
    const char* cpu;
    Shape dims;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {{ReduceOp::Sum, "ReduceSum", {96, 1000}, {1}},
                        {ReduceOp::Max, "ReduceMax", {8, 20000}, {1}},    // split rows
                        {ReduceOp::Max, "ReduceMax", {300, 20000}, {1}},  // a block per row, 4-wide
                        {ReduceOp::Mean, "ReduceMean", {16, 100, 300}, {1}},
                        {ReduceOp::Sum, "ReduceSum", {1, 65536, 64}, {1}},
                        {ReduceOp::Mean, "ReduceMean", {3, 7}, {1}},
                        // gathered: a convolution bias gradient, and short rows of two runs
                        {ReduceOp::Sum, "ReduceSum", {8, 6, 12, 12}, {0, 2, 3}},
                        {ReduceOp::Mean, "ReduceMean", {8, 6, 12, 12}, {0, 2, 3}},
                        {ReduceOp::Max, "ReduceMax", {2, 3, 40, 5, 60}, {1, 3}},
                        // split rows (few long rows): a whole tensor, and a split gathered one
                        {ReduceOp::Sum, "ReduceSum", {1 << 20}, {0}},
                        {ReduceOp::Max, "ReduceMax", {1 << 20}, {0}},
                        {ReduceOp::Mean, "ReduceMean", {3, 100000}, {1}},
                        {ReduceOp::Sum, "ReduceSum", {64, 8, 64, 64}, {0, 2, 3}},
                        // the other reductions: rows (4-wide), columns, gathered, split
                        {ReduceOp::Min, "ReduceMin", {96, 1000}, {1}},
                        {ReduceOp::Min, "ReduceMin", {3, 4, 5}, {0, 2}},
                        {ReduceOp::L1, "ReduceL1", {16, 100, 300}, {1}},
                        {ReduceOp::L2, "ReduceL2", {1 << 20}, {0}},
                        {ReduceOp::SumSquare, "ReduceSumSquare", {96, 1000}, {1}},
                        {ReduceOp::LogSum, "ReduceLogSum", {64, 300}, {0}},
                        // products of values near 1 (rows, columns, split rows)
                        {ReduceOp::Prod, "ReduceProd", {96, 100}, {1}},
                        {ReduceOp::Prod, "ReduceProd", {40, 7, 30}, {1}},
                        {ReduceOp::Prod, "ReduceProd", {2, 40000}, {1}}};
  for (const Case& c : cases) {
    const KernelSource ks = emit_reduce(reduce_spec(c.op, dtype(), c.dims, c.axes));
    // ReduceLogSum's sum must be positive; ReduceProd's products must stay finite and not vanish.
    Tensor x = c.op == ReduceOp::LogSum ? random(c.dims, 3, 0.0, 1.0)
               : c.op == ReduceOp::Prod ? random(c.dims, 3, 0.9995, 1.0005)
                                        : random(c.dims, 3);
    Tensor xf = to_f32(x);
    Shape kept;
    for (int64_t d = 0; d < int64_t(c.dims.size()); ++d)
      if (std::find(c.axes.begin(), c.axes.end(), d) == c.axes.end()) kept.push_back(c.dims[size_t(d)]);
    Tensor want(TensorType{DType::F32, kept});
    DeviceBuffer dx = upload(x), dy(size_t(want.type.numel()) * dtype_size(dtype()));
    run_kernels(ks, {{"x", ptr(dx)}, {"y", ptr(dy)}});
    Attrs attrs;
    attrs.set("axes", c.axes);
    attrs.set("keepdims", int64_t(0));
    run_cpu(c.cpu, attrs, {&xf}, {&want});
    // Sums of many elements are compared against their magnitude.
    expect_close(download(dy, {dtype(), kept}), want, dtype(), ks.name);
  }
}

// ArgMax/ArgMin: the CPU kernel's indices, ties included (values rounded to a coarse grid so
// that equal values occur), first and last.
TEST_P(CudaKernels, ArgExtremum) {
  struct Case {
    bool max, last;
    int64_t outer, extent, inner;
  };
  for (const Case& c : {Case{true, false, 96, 1000, 1}, Case{false, true, 3, 7, 50},
                        Case{true, true, 5, 300, 33}, Case{false, false, 1, 100000, 1}}) {
    std::vector<double> values = random_values(c.outer * c.extent * c.inner, 9, -4.0, 4.0);
    for (double& v : values) v = std::round(v * 4.0) / 4.0;  // exact in every dtype; ties
    const Tensor x = make(dtype(), {c.outer, c.extent, c.inner}, values);
    const KernelSource ks = emit_arg_extremum({dtype(), c.max, c.last, c.outer, c.extent, c.inner});
    DeviceBuffer dx = upload(x), dy(size_t(c.outer * c.inner) * sizeof(int64_t));
    run_kernels(ks, {{"x", ptr(dx)}, {"y", ptr(dy)}});
    Tensor want(TensorType{DType::I64, {c.outer, 1, c.inner}});
    Tensor xf = to_f32(x);
    Attrs attrs;
    attrs.set("axis", int64_t(1));
    attrs.set("select_last_index", int64_t(c.last ? 1 : 0));
    run_cpu(c.max ? "ArgMax" : "ArgMin", attrs, {&xf}, {&want});
    EXPECT_EQ(download(dy, {DType::I64, {c.outer, 1, c.inner}}), want) << ks.name;
  }
}

// A fused reduction (FusedReduce) of relu(x + b) * x, storing relu(x + b) as it reads it: rows,
// columns with splits, and a whole tensor split over blocks.
TEST_P(CudaKernels, FusedReductions) {
  struct Case {
    int64_t rows, cols, outer, extent, inner;
  };
  for (const Case& c :
       {Case{96, 1000, 96, 1000, 1}, Case{65536, 64, 1, 65536, 64}, Case{512, 1024, 1, 1 << 19, 1}}) {
    const ExprProgram p = fused_reduce_program(dtype(), c.rows, c.cols, /*store=*/true);
    const KernelSource ks =
        emit_reduce(reduce_view(ReduceOp::Sum, DType::F32, c.outer, c.extent, c.inner, &p));
    const std::vector<Tensor> inputs = {random({c.rows, c.cols}, 5), random({c.cols}, 6)};
    DeviceBuffer dx = upload(inputs[0]), db = upload(inputs[1]);
    DeviceBuffer dy(size_t(c.outer * c.inner) * sizeof(float)),
        dr(size_t(c.rows * c.cols) * dtype_size(dtype()));
    run_kernels(ks, {{"x", ptr(dx)}, {"b", ptr(db)}, {"y", ptr(dy)}, {"r", ptr(dr)}});
    const std::vector<Tensor> want = reference_program(p, inputs);
    Tensor value = want[0];
    value.type.shape = {c.outer, c.extent, c.inner};
    Tensor sum(TensorType{DType::F32, {c.outer, c.inner}});
    Attrs attrs;
    attrs.set("axes", std::vector<int64_t>{1});
    attrs.set("keepdims", int64_t(0));
    run_cpu("ReduceSum", attrs, {&value}, {&sum});
    expect_close(download(dy, {DType::F32, {c.outer, c.inner}}), sum, dtype(), ks.name + " y");
    expect_close(download(dr, {dtype(), {c.rows, c.cols}}), want[1], dtype(), ks.name + " r");
  }
}

// ---- softmax

TEST_P(CudaKernels, SoftmaxForward) {
  for (const SoftmaxSpec& s :
       {SoftmaxSpec{dtype(), 128, 1000, 1, false}, SoftmaxSpec{dtype(), 4, 50, 9, true},
        SoftmaxSpec{dtype(), 2, 5000, 1, false}}) {
    const KernelSource ks = emit_softmax_forward(s);
    const Shape dims = {s.outer, s.extent, s.inner};
    Tensor x = random(dims, 4, -4.0, 4.0);
    DeviceBuffer dx = upload(x), dy(x.bytes.size());
    run_kernels(ks, {{"x", ptr(dx)}, {"y", ptr(dy)}});
    Tensor xf = to_f32(x), want(TensorType{DType::F32, dims});
    Attrs attrs;
    attrs.set("axis", int64_t(1));
    run_cpu(s.log ? "LogSoftmax" : "Softmax", attrs, {&xf}, {&want});
    expect_close(download(dy, {dtype(), dims}), want, dtype(), ks.name);
  }
}

// ReduceLogSumExp: the softmax forward's row statistics, against the CPU kernel (which shifts by the
// max in double).
TEST_P(CudaKernels, ReduceLogSumExp) {
  for (const SoftmaxSpec& s :
       {SoftmaxSpec{dtype(), 64, 3000, 1, false, true}, SoftmaxSpec{dtype(), 4, 50, 9, false, true}}) {
    const KernelSource ks = emit_softmax_forward(s);
    const Shape dims = {s.outer, s.extent, s.inner}, kept = {s.outer, s.inner};
    Tensor x = random(dims, 14, -30.0, 30.0);
    DeviceBuffer dx = upload(x), dy(size_t(s.outer * s.inner) * dtype_size(dtype()));
    run_kernels(ks, {{"x", ptr(dx)}, {"y", ptr(dy)}});
    Tensor xf = to_f32(x), want(TensorType{DType::F32, kept});
    Attrs attrs;
    attrs.set("axes", std::vector<int64_t>{1});
    attrs.set("keepdims", int64_t(0));
    run_cpu("ReduceLogSumExp", attrs, {&xf}, {&want});
    expect_close(download(dy, {dtype(), kept}), want, dtype(), ks.name);
  }
}

TEST_P(CudaKernels, SoftmaxBackward) {
  for (const SoftmaxSpec& s :
       {SoftmaxSpec{dtype(), 128, 1000, 1, false}, SoftmaxSpec{dtype(), 4, 3000, 2, true}}) {
    const KernelSource ks = emit_softmax_backward(s);
    const Shape dims = {s.outer, s.extent, s.inner};
    // y: the forward's output by the CPU kernel, stored in the storage type.
    Tensor xf = to_f32(random(dims, 5, -3.0, 3.0)), yf(TensorType{DType::F32, dims});
    Attrs attrs;
    attrs.set("axis", int64_t(1));
    run_cpu(s.log ? "LogSoftmax" : "Softmax", attrs, {&xf}, {&yf});
    const Tensor y = make(dtype(), dims, yf.as_double()), dy = random(dims, 6);
    DeviceBuffer d_dy = upload(dy), d_y = upload(y), d_dx(y.bytes.size());
    run_kernels(ks, {{"dy", ptr(d_dy)}, {"y", ptr(d_y)}, {"dx", ptr(d_dx)}});
    // No CPU kernel: the formulas in double over the same (rounded) values.
    const std::vector<double> yv = y.as_double(), gv = dy.as_double();
    std::vector<double> want(yv.size());
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        auto at = [&](int64_t c) { return size_t((o * s.extent + c) * s.inner + i); };
        double acc = 0;
        for (int64_t c = 0; c < s.extent; ++c) acc += s.log ? gv[at(c)] : gv[at(c)] * yv[at(c)];
        for (int64_t c = 0; c < s.extent; ++c)
          want[at(c)] = s.log ? gv[at(c)] - std::exp(yv[at(c)]) * acc : yv[at(c)] * (gv[at(c)] - acc);
      }
    expect_close(download(d_dx, {dtype(), dims}), make(DType::F32, dims, want), dtype(), ks.name);
  }
}

// ---- attention

// The tensor-core Attention kernels against the CPU's on the same rounded operands: the forward's
// o and lse, then the backward from the GPU's own o and lse. Partial tiles (100 rows, 77 keys)
// with two head sizes, a GPT-like shape, a causal one, and seq-major ones (heads in the rows).
TEST_P(CudaKernels, AttentionForwardAndBackward) {
  if (dtype() == DType::F32) GTEST_SKIP() << "the attention kernels take f16 or bf16";
  for (const AttentionSpec& spec : {AttentionSpec{dtype(), 3, 100, 77, 32, 48, 0.3, false, false, 1},
                                    AttentionSpec{dtype(), 2, 256, 256, 64, 64, 0.125, false, false, 1},
                                    AttentionSpec{dtype(), 2, 200, 200, 64, 64, 0.125, true, false, 1},
                                    AttentionSpec{dtype(), 6, 100, 77, 32, 48, 0.3, false, true, 3},
                                    AttentionSpec{dtype(), 24, 256, 256, 64, 64, 0.125, true, true, 12}}) {
    const Shape qs = attention_operand_dims(spec, spec.rows, spec.depth),
                ks_ = attention_operand_dims(spec, spec.keys, spec.depth),
                vs = attention_operand_dims(spec, spec.keys, spec.value_depth),
                os = attention_operand_dims(spec, spec.rows, spec.value_depth), ls = attention_lse_dims(spec);
    Tensor q = random(qs, 21, -2.0, 2.0), k = random(ks_, 22, -2.0, 2.0), v = random(vs, 23),
           dout = random(os, 24);
    DeviceBuffer d_q = upload(q), d_k = upload(k), d_v = upload(v), d_do = upload(dout),
                 d_o(size_t(num_elements(os)) * dtype_size(dtype())), d_lse(size_t(num_elements(ls)) * 4),
                 d_dq(q.bytes.size()), d_dk(k.bytes.size()), d_dv(v.bytes.size());
    const KernelSource fwd = emit_attention_forward(spec);
    run_kernels(fwd,
                {{"q", ptr(d_q)}, {"k", ptr(d_k)}, {"v", ptr(d_v)}, {"o", ptr(d_o)}, {"lse", ptr(d_lse)}});
    Tensor qf = to_f32(q), kf = to_f32(k), vf = to_f32(v), dof = to_f32(dout);
    Tensor o(TensorType{DType::F32, os}), lse(TensorType{DType::F32, ls});
    Attrs attrs;
    attrs.set("scale", spec.scale);
    if (spec.causal) attrs.set("causal", int64_t(1));
    if (spec.seq_major) attrs.set("seq_major", int64_t(1));
    run_cpu("Attention", attrs, {&qf, &kf, &vf}, {&o, &lse});
    const Tensor gpu_o = download(d_o, {dtype(), os}), gpu_lse = download(d_lse, {DType::F32, ls});
    expect_close(gpu_o, o, dtype(), fwd.name + " o");
    expect_close(gpu_lse, lse, DType::F32, fwd.name + " lse");

    const KernelSource bwd = emit_attention_backward(spec);
    run_kernels(bwd, {{"dout", ptr(d_do)},
                      {"q", ptr(d_q)},
                      {"k", ptr(d_k)},
                      {"v", ptr(d_v)},
                      {"o", ptr(d_o)},
                      {"lse", ptr(d_lse)},
                      {"dq", ptr(d_dq)},
                      {"dk", ptr(d_dk)},
                      {"dv", ptr(d_dv)}});
    Tensor of = to_f32(gpu_o), lsef = gpu_lse;
    Tensor dq(TensorType{DType::F32, qs}), dk(TensorType{DType::F32, ks_}), dv(TensorType{DType::F32, vs});
    run_cpu("AttentionGrad", attrs, {&dof, &qf, &kf, &vf, &of, &lsef}, {&dq, &dk, &dv});
    expect_close(download(d_dq, {dtype(), qs}), dq, dtype(), bwd.name + " dq");
    expect_close(download(d_dk, {dtype(), ks_}), dk, dtype(), bwd.name + " dk");
    expect_close(download(d_dv, {dtype(), vs}), dv, dtype(), bwd.name + " dv");
  }
}

// ---- layer norm

TEST_P(CudaKernels, LayerNormForward) {
  const int64_t rows = 256, cols = 768;
  const LayerNormSpec spec{dtype(), rows, cols, 1e-5, true, std::nullopt};
  const KernelSource ks = emit_layer_norm_forward(spec);
  Tensor x = random({rows, cols}, 7, -2.0, 3.0), scale = random({cols}, 8), bias = random({cols}, 9);
  DeviceBuffer dx = upload(x), ds = upload(scale), db = upload(bias), dy(x.bytes.size()), dmean(rows * 4),
               dinv(rows * 4);
  run_kernels(ks, {{"x", ptr(dx)},
                   {"scale", ptr(ds)},
                   {"bias", ptr(db)},
                   {"y", ptr(dy)},
                   {"mean", ptr(dmean)},
                   {"inv_std", ptr(dinv)}});
  Tensor xf = to_f32(x), sf = to_f32(scale), bf = to_f32(bias);
  Tensor y(TensorType{DType::F32, {rows, cols}}), mean(TensorType{DType::F32, {rows, 1}}),
      inv(TensorType{DType::F32, {rows, 1}});
  Attrs attrs;
  attrs.set("axis", int64_t(-1));
  attrs.set("epsilon", 1e-5);
  run_cpu("LayerNormalization", attrs, {&xf, &sf, &bf}, {&y, &mean, &inv});
  expect_close(download(dy, {dtype(), {rows, cols}}), y, dtype(), ks.name + " y");
  expect_close(download(dmean, {DType::F32, {rows, 1}}), mean, DType::F32, ks.name + " mean");
  expect_close(download(dinv, {DType::F32, {rows, 1}}), inv, DType::F32, ks.name + " inv_std");
}

// InstanceNormalization of [2, 3, 5, 40]: the forward on 6 rows of 200, scale and bias per channel
// (mean and inv_std not wanted: null), against the CPU's InstanceNormalization.
TEST_P(CudaKernels, InstanceNormForward) {
  const Shape shape = {2, 3, 5, 40};
  LayerNormSpec spec{dtype(), 6, 200, 1e-5, true, std::nullopt};
  spec.channels = 3;
  const KernelSource ks = emit_layer_norm_forward(spec);
  Tensor x = random(shape, 17, -2.0, 3.0), scale = random({3}, 18), bias = random({3}, 19);
  DeviceBuffer dx = upload(x), ds = upload(scale), db = upload(bias), dy(x.bytes.size());
  run_kernels(ks, {{"x", ptr(dx)},
                   {"scale", ptr(ds)},
                   {"bias", ptr(db)},
                   {"y", ptr(dy)},
                   {"mean", static_cast<void*>(nullptr)},
                   {"inv_std", static_cast<void*>(nullptr)}});
  Tensor xf = to_f32(x), sf = to_f32(scale), bf = to_f32(bias), y(TensorType{DType::F32, shape});
  Attrs attrs;
  attrs.set("epsilon", 1e-5);
  run_cpu("InstanceNormalization", attrs, {&xf, &sf, &bf}, {&y});
  expect_close(download(dy, {dtype(), shape}), y, dtype(), ks.name + " y");
}

TEST_P(CudaKernels, LayerNormBackward) {
  for (const auto& [rows, cols] : {std::pair<int64_t, int64_t>{64, 768}, {256, 768}, {16384, 64}}) {
    const LayerNormSpec spec{dtype(), rows, cols, 1e-5, true, std::nullopt};
    const KernelSource ks = emit_layer_norm_backward(spec);
    Tensor dy = random({rows, cols}, 10), x = random({rows, cols}, 11, -2.0, 2.0), scale = random({cols}, 12);
    DeviceBuffer d_dy = upload(dy), d_x = upload(x), d_s = upload(scale), d_dx(x.bytes.size()),
                 d_dscale(scale.bytes.size()), d_dbias(scale.bytes.size());
    run_kernels(ks, {{"dy", ptr(d_dy)},
                     {"x", ptr(d_x)},
                     {"scale", ptr(d_s)},
                     {"dx", ptr(d_dx)},
                     {"dscale", ptr(d_dscale)},
                     {"dbias", ptr(d_dbias)}});
    if (!cpu::find_kernel("LayerNormGrad")) GTEST_SKIP() << "no CPU LayerNormGrad kernel to compare with";
    Tensor dyf = to_f32(dy), xf = to_f32(x), sf = to_f32(scale);
    Tensor dx(TensorType{DType::F32, {rows, cols}}), dscale(TensorType{DType::F32, {cols}}),
        dbias(TensorType{DType::F32, {cols}});
    Attrs attrs;
    attrs.set("axis", int64_t(-1));
    attrs.set("epsilon", 1e-5);
    run_cpu("LayerNormGrad", attrs, {&dyf, &xf, &sf}, {&dx, &dscale, &dbias});
    expect_close(download(d_dx, {dtype(), {rows, cols}}), dx, dtype(), ks.name + " dx");
    expect_close(download(d_dscale, {dtype(), {cols}}), dscale, dtype(), ks.name + " dscale");
    expect_close(download(d_dbias, {dtype(), {cols}}), dbias, dtype(), ks.name + " dbias");
  }
}

// Mixed precision's layer norm: f32 x, scale and bias, y of the case's type (rounded from f32), and
// the backward with dy of that type; against the CPU kernels on the same values.
TEST_P(CudaKernels, LayerNormOfF32WithResultOfTheCaseType) {
  const int64_t rows = 64, cols = 768;
  const LayerNormSpec spec{DType::F32, rows, cols, 1e-5, true, dtype()};
  const auto f32 = [](const Shape& dims, uint32_t seed, double lo = -1.0, double hi = 1.0) {
    return make(DType::F32, dims, random_values(num_elements(dims), seed, lo, hi));
  };
  Tensor x = f32({rows, cols}, 13, -2.0, 3.0), scale = f32({cols}, 14), bias = f32({cols}, 15),
         dy = random({rows, cols}, 16);
  Attrs attrs;
  attrs.set("axis", int64_t(-1));
  attrs.set("epsilon", 1e-5);
  const KernelSource fwd = emit_layer_norm_forward(spec);
  DeviceBuffer d_x = upload(x), d_s = upload(scale), d_b = upload(bias),
               d_y(size_t(rows * cols) * dtype_size(dtype())), d_mean(rows * 4), d_inv(rows * 4);
  run_kernels(fwd, {{"x", ptr(d_x)},
                    {"scale", ptr(d_s)},
                    {"bias", ptr(d_b)},
                    {"y", ptr(d_y)},
                    {"mean", ptr(d_mean)},
                    {"inv_std", ptr(d_inv)}});
  Tensor y(TensorType{DType::F32, {rows, cols}}), mean(TensorType{DType::F32, {rows, 1}}),
      inv(TensorType{DType::F32, {rows, 1}});
  run_cpu("LayerNormalization", attrs, {&x, &scale, &bias}, {&y, &mean, &inv});
  expect_close(download(d_y, {dtype(), {rows, cols}}), y, dtype(), fwd.name + " y");

  const KernelSource bwd = emit_layer_norm_backward(spec);
  DeviceBuffer d_dy = upload(dy), d_dx(x.bytes.size()), d_dscale(scale.bytes.size()),
               d_dbias(scale.bytes.size());
  run_kernels(bwd, {{"dy", ptr(d_dy)},
                    {"x", ptr(d_x)},
                    {"scale", ptr(d_s)},
                    {"dx", ptr(d_dx)},
                    {"dscale", ptr(d_dscale)},
                    {"dbias", ptr(d_dbias)}});
  Tensor dyf = to_f32(dy), dx(TensorType{DType::F32, {rows, cols}}), dscale(TensorType{DType::F32, {cols}}),
         dbias(TensorType{DType::F32, {cols}});
  run_cpu("LayerNormGrad", attrs, {&dyf, &x, &scale}, {&dx, &dscale, &dbias});
  expect_close(download(d_dx, {DType::F32, {rows, cols}}), dx, DType::F32, bwd.name + " dx");
  expect_close(download(d_dscale, {DType::F32, {cols}}), dscale, DType::F32, bwd.name + " dscale");
  expect_close(download(d_dbias, {DType::F32, {cols}}), dbias, DType::F32, bwd.name + " dbias");
}

// ---- softmax cross-entropy

// Labels in [0, classes) with every fifth one `ignore` (when given).
Tensor labels_for(DType t, int64_t n, int64_t classes, std::optional<int64_t> ignore) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(ignore && i % 5 == 0 ? double(*ignore) : double((i * 7 + 3) % classes));
  return make(t, {n}, v);
}

// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (log_probabilities), with and without
// class weights, against the CPU kernels.
TEST_P(CudaKernels, CrossEntropyForward) {
  for (const CrossEntropySpec& s :
       {CrossEntropySpec{dtype(), DType::I64, 64, 1000, 1, "mean", -100, false},
        CrossEntropySpec{dtype(), DType::I32, 8, 10, 5, "none", std::nullopt, false},
        CrossEntropySpec{dtype(), DType::I64, 30, 2000, 1, "sum", std::nullopt, false},
        CrossEntropySpec{dtype(), DType::I64, 8, 10, 5, "mean", 2, true},
        CrossEntropySpec{dtype(), DType::I32, 64, 1000, 1, "none", std::nullopt, true},
        CrossEntropySpec{dtype(), DType::I64, 30, 20, 3, "sum", -1, true}}) {
    for (bool weighted : {false, true}) {
      const KernelSource ks = emit_cross_entropy_forward(s);
      const Shape dims = {s.batch, s.classes, s.inner}, label_dims = {s.batch, s.inner};
      const Shape loss_dims = s.reduction == "none" ? label_dims : Shape{};
      Tensor scores = random(dims, 13, -3.0, 3.0);
      Tensor labels = labels_for(s.label_dtype, s.batch * s.inner, s.classes, s.ignore_index);
      labels.type.shape = label_dims;
      Tensor weights = random({s.classes}, 17, 0.1, 2.0);
      DeviceBuffer d_scores = upload(scores), d_labels = upload(labels), d_weights = upload(weights),
                   d_loss(size_t(num_elements(loss_dims)) * dtype_size(dtype())), d_logp(scores.bytes.size());
      run_kernels(ks, {{"scores", ptr(d_scores)},
                       {"labels", ptr(d_labels)},
                       {"weight", weighted ? ptr(d_weights) : nullptr},
                       {"loss", ptr(d_loss)},
                       {"log_prob", s.log_probabilities ? nullptr : ptr(d_logp)}});
      Tensor sf = to_f32(scores), wf = to_f32(weights), loss(TensorType{DType::F32, loss_dims}),
             logp(TensorType{DType::F32, dims});
      Attrs attrs;
      attrs.set("reduction", s.reduction);
      if (s.ignore_index) attrs.set("ignore_index", *s.ignore_index);
      const std::string what = ks.name + (weighted ? " weighted" : "");
      if (s.log_probabilities) {
        run_cpu("NegativeLogLikelihoodLoss", attrs, {&sf, &labels, weighted ? &wf : nullptr}, {&loss});
      } else {
        run_cpu("SoftmaxCrossEntropyLoss", attrs, {&sf, &labels, weighted ? &wf : nullptr}, {&loss, &logp});
        expect_close(download(d_logp, {dtype(), dims}), logp, dtype(), what + " log_prob");
      }
      expect_close(download(d_loss, {dtype(), loss_dims}), loss, dtype(), what + " loss");
    }
  }
}

TEST_P(CudaKernels, CrossEntropyBackward) {
  for (const CrossEntropySpec& s :
       {CrossEntropySpec{dtype(), DType::I64, 64, 1000, 1, "mean", -100},
        CrossEntropySpec{dtype(), DType::I64, 8, 10, 5, "sum", std::nullopt},
        CrossEntropySpec{dtype(), DType::I32, 8, 10, 5, "none", std::nullopt},
        CrossEntropySpec{dtype(), DType::I64, 16, 300, 1, "mean", std::nullopt}}) {
    const KernelSource ks = emit_cross_entropy_backward(s);
    const Shape dims = {s.batch, s.classes, s.inner}, label_dims = {s.batch, s.inner};
    const Shape loss_dims = s.reduction == "none" ? label_dims : Shape{};
    Tensor scores = random(dims, 14, -3.0, 3.0), dloss = random(loss_dims, 15, 0.5, 2.0);
    Tensor labels = labels_for(s.label_dtype, s.batch * s.inner, s.classes, s.ignore_index);
    labels.type.shape = label_dims;
    DeviceBuffer d_scores = upload(scores), d_labels = upload(labels), d_dloss = upload(dloss),
                 d_dscores(scores.bytes.size());
    run_kernels(ks, {{"dloss", ptr(d_dloss)},
                     {"scores", ptr(d_scores)},
                     {"labels", ptr(d_labels)},
                     {"dscores", ptr(d_dscores)}});
    Tensor sf = to_f32(scores), df = to_f32(dloss), want(TensorType{DType::F32, dims});
    Attrs attrs;
    attrs.set("reduction", s.reduction);
    if (s.ignore_index) attrs.set("ignore_index", *s.ignore_index);
    run_cpu("SoftmaxCrossEntropyGrad", attrs, {&df, &sf, &labels}, {&want});
    expect_close(download(d_dscores, {dtype(), dims}), want, dtype(), ks.name);
  }
}

// ---- embedding

TEST_P(CudaKernels, EmbeddingGatherAndBackward) {
  for (const EmbeddingSpec& s :
       {EmbeddingSpec{dtype(), DType::I64, 1000, 64, 300}, EmbeddingSpec{dtype(), DType::I32, 50, 7, 200},
        EmbeddingSpec{dtype(), DType::I64, 50, 8, 30, 3}}) {  // the last: Gather on axis 1 of [3, 50, 8]
    // The table [vocab, dim], or [outer, vocab, dim] gathered on axis 1.
    const Shape table_dims = s.outer == 1 ? Shape{s.vocab, s.dim} : Shape{s.outer, s.vocab, s.dim};
    const Shape out_dims = s.outer == 1 ? Shape{s.indices, s.dim} : Shape{s.outer, s.indices, s.dim};
    // Indices with repeats and negative (from the end) entries.
    std::vector<double> idx;
    for (int64_t i = 0; i < s.indices; ++i)
      idx.push_back(double(i % 3 == 0 ? -(i % s.vocab) - 1 : (i * 13) % s.vocab));
    Tensor indices = make(s.index_dtype, {s.indices}, idx);
    Tensor table = random(table_dims, 16), dy = random(out_dims, 17);
    DeviceBuffer d_table = upload(table), d_idx = upload(indices),
                 d_out(size_t(num_elements(out_dims)) * dtype_size(dtype())), d_dy = upload(dy),
                 d_dtable(table.bytes.size());
    const KernelSource gather = emit_embedding_gather(s);
    run_kernels(gather, {{"weight", ptr(d_table)}, {"indices", ptr(d_idx)}, {"out", ptr(d_out)}});
    Tensor tf = to_f32(table), want(TensorType{DType::F32, out_dims});
    Attrs axis;
    axis.set("axis", int64_t(s.outer == 1 ? 0 : 1));
    run_cpu("Gather", axis, {&tf, &indices}, {&want});
    expect_close(download(d_out, {dtype(), out_dims}), want, dtype(), gather.name);

    const KernelSource backward = emit_embedding_backward(s);
    run_kernels(backward, {{"dy", ptr(d_dy)}, {"indices", ptr(d_idx)}, {"dtable", ptr(d_dtable)}});
    if (!cpu::find_kernel("GatherGrad")) GTEST_SKIP() << "no CPU GatherGrad kernel to compare with";
    Tensor dyf = to_f32(dy), dtable(TensorType{DType::F32, table_dims});
    Attrs attrs = axis;
    attrs.set("shape", table_dims);
    run_cpu("GatherGrad", attrs, {&dyf, &indices}, {&dtable});
    expect_close(download(d_dtable, {dtype(), table_dims}), dtable, dtype(), backward.name);
  }
}

// ---- data movement

// Slice, Pad (each mode), Concat and Transpose against the CPU kernels, bit for bit: the
// kernel_cases specs with the attributes that describe the same copies.
TEST_P(CudaKernels, CopySlicePadConcatTranspose) {
  using codegen::cuda::test::concat_case;
  using codegen::cuda::test::pad_case;
  using codegen::cuda::test::slice_case;
  using codegen::cuda::test::transpose_case;
  auto check = [&](const CopySpec& spec, const std::string& op, const Attrs& attrs) {
    const KernelSource ks = emit_copy(spec);
    std::vector<Tensor> inputs;
    std::vector<DeviceBuffer> buffers;
    Args args;
    for (size_t k = 0; k < spec.sources.size(); ++k) {
      inputs.push_back(random(spec.sources[k].dims, 130 + uint32_t(k)));
      buffers.push_back(upload(inputs.back()));
      args["in" + std::to_string(k)] = ptr(buffers.back());
    }
    const TensorType out_type{dtype(), spec.out};
    DeviceBuffer out(size_t(out_type.numel()) * dtype_size(dtype()));
    args["out0"] = ptr(out);
    run_kernels(ks, args);
    Tensor want(out_type);
    std::vector<Tensor*> in_ptrs;
    for (Tensor& t : inputs) in_ptrs.push_back(&t);
    run_cpu(op, attrs, in_ptrs, {&want});
    EXPECT_EQ(download(out, out_type), want) << ks.name;
  };
  Attrs slice;
  slice.set("starts", std::vector<int64_t>{1, 8});
  slice.set("ends", std::vector<int64_t>{6, 1});
  slice.set("axes", std::vector<int64_t>{0, 1});
  slice.set("steps", std::vector<int64_t>{2, -2});
  check(slice_case(dtype()), "Slice", slice);
  for (const char* mode : {"constant", "edge", "reflect"}) {
    Attrs pad;
    pad.set("pads", mode == std::string("constant") ? std::vector<int64_t>{-1, 1, 2, 2}
                                                    : std::vector<int64_t>{1, 1, 2, 2});
    pad.set("mode", std::string(mode));
    pad.set("value", -1.5);
    check(pad_case(dtype(), mode), "Pad", pad);
  }
  Attrs concat;
  concat.set("axis", int64_t(1));
  check(concat_case(dtype()), "Concat", concat);
  Attrs transpose;
  transpose.set("perm", std::vector<int64_t>{2, 0, 1});
  check(transpose_case(dtype()), "Transpose", transpose);
}

// Tile, SliceGrad, Split, GatherElements and the other copies as the op table binds them from their
// attributes (tests/emulation/op_cases.h, each case's own dtype; run once, under f32), byte for byte
// against the CPU kernels: what dlc_emulated_cuda_tests checks on the host, here on the device.
TEST_P(CudaKernels, CopyOpsFromTheirAttributes) {
  if (dtype() != DType::F32) GTEST_SKIP() << "the cases carry their own dtypes";
  for (const emulation::OpCase& c : emulation::op_cases()) {
    std::vector<Tensor> ins, want;
    std::vector<DeviceBuffer> buffers;
    Args args;
    std::mt19937 rng(140);
    for (size_t k = 0; k < c.ins.size(); ++k) {
      // Random bytes (a copy moves bytes, so any will do; Tensor's == compares bytes, NaN or not).
      Tensor t(TensorType{emulation::input_dtype(c, k), c.ins[k]});
      t.bytes = emulation::input_bytes(c, k, rng);
      ins.push_back(std::move(t));
      buffers.push_back(upload(ins.back()));
      args["in" + std::to_string(k)] = ptr(buffers.back());
    }
    for (size_t k = 0; k < c.outs.size(); ++k) {
      want.emplace_back(TensorType{emulation::output_dtype(c), c.outs[k]});
      buffers.emplace_back(want.back().bytes.size());
      args["out" + std::to_string(k)] = ptr(buffers.back());
    }
    const KernelSource ks = emulation::case_kernels(c);
    for (const KernelEntry& e : ks.entries)  // the embedding kernels' parameter names
      for (const std::string& p : e.params)
        if (!args.count(p) && args.count(emulation::positional_param(p)))
          args[p] = args[emulation::positional_param(p)];
    run_kernels(ks, args);
    std::vector<Tensor*> in_ptrs, want_ptrs;
    for (Tensor& t : ins) in_ptrs.push_back(&t);
    for (Tensor& t : want) want_ptrs.push_back(&t);
    run_cpu(c.op, c.attrs, in_ptrs, want_ptrs);
    for (size_t k = 0; k < c.outs.size(); ++k)
      EXPECT_EQ(download(buffers[ins.size() + k], want[k].type), want[k]) << c.name << " output " << k;
  }
}

// ---- dropout

// The mask and the output bit for bit as the CPU kernel's (same Philox stream, same rounding),
// with an offset (the step) and without.
TEST_P(CudaKernels, DropoutMatchesCpu) {
  for (const bool with_offset : {true, false}) {
    const DropoutSpec spec{dtype(), 1003, 0.25,
                           42,      true, with_offset ? std::optional(DType::I64) : std::nullopt};
    const KernelSource ks = emit_dropout(spec);
    const Tensor x = random({spec.numel}, 140);
    const Tensor offset = make(DType::I64, {}, {5});
    DeviceBuffer d_x = upload(x), d_offset = upload(offset);
    DeviceBuffer d_y(size_t(spec.numel) * dtype_size(dtype())), d_mask(size_t(spec.numel));
    Args args = {{"x", ptr(d_x)}, {"y", ptr(d_y)}, {"mask", ptr(d_mask)}};
    if (with_offset) args["offset"] = ptr(d_offset);
    run_kernels(ks, args);
    Attrs attrs;
    attrs.set("ratio", spec.ratio);
    attrs.set("seed", int64_t(spec.seed));
    // The CPU Dropout is f32 only: the reference runs on the rounded inputs in f32, so the mask
    // (Philox) must match exactly and the scaled values to the storage type's rounding.
    Tensor in = to_f32(x), off = offset, y(in.type), mask(TensorType{DType::Bool, {spec.numel}});
    run_cpu("Dropout", attrs, {&in, with_offset ? &off : nullptr}, {&y, &mask});
    EXPECT_EQ(download(d_mask, mask.type), mask) << ks.name;
    if (dtype() == DType::F32)
      EXPECT_EQ(download(d_y, y.type), y) << ks.name;
    else
      expect_close(download(d_y, x.type), y, dtype(), ks.name);
  }
}

// ---- optimizers

// Three tensors in one launch: sizes cover a partial chunk, several chunks and a short tail.
const std::vector<int64_t> kSizes = {5000, 2 * kMultiTensorChunk + 3, 17};

struct DeviceTable {
  DeviceBuffer table;
  int num_tensors = 0;
  long long num_chunks = 0;
};

DeviceTable upload_table(std::vector<MultiTensorEntry> entries) {
  DeviceTable t;
  t.num_chunks = assign_chunks(entries);
  t.num_tensors = int(entries.size());
  t.table = DeviceBuffer(entries.size() * sizeof(MultiTensorEntry));
  t.table.upload(entries.data());
  return t;
}

// Uploads each tensor's parts (param, grad, states…, at most 4) as one multi-tensor table, runs
// `ks` over it with the scalars lr and step (and apply, when given), and returns the device
// copies of the parts, tensor by tensor in order.
std::vector<DeviceBuffer> run_multi_tensor(const KernelSource& ks,
                                           const std::vector<std::vector<const Tensor*>>& tensors, float lr,
                                           float step, std::optional<bool> apply = std::nullopt) {
  std::vector<DeviceBuffer> buffers;
  std::vector<MultiTensorEntry> entries;
  for (const std::vector<const Tensor*>& parts : tensors) {
    MultiTensorEntry e;
    for (size_t j = 0; j < parts.size(); ++j) {
      buffers.push_back(upload(*parts[j]));
      e.ptr[j] = buffers.back().get();
    }
    e.n = num_elements(parts[0]->type.shape);
    entries.push_back(e);
  }
  const DeviceTable table = upload_table(entries);
  DeviceBuffer d_lr = DeviceBuffer::from(std::vector<float>{lr}),
               d_step = DeviceBuffer::from(std::vector<float>{step}),
               d_apply = DeviceBuffer::from(std::vector<uint8_t>{uint8_t(apply.value_or(true))});
  run_kernels(ks,
              {{"table", ptr(table.table)},
               {"num_tensors", table.num_tensors},
               {"num_chunks", table.num_chunks},
               {"lr", ptr(d_lr)},
               {"step", ptr(d_step)},
               {"apply", apply ? ptr(d_apply) : static_cast<void*>(nullptr)}},
              multi_tensor_grid(table.num_chunks));
  return buffers;
}

TEST_P(CudaKernels, SgdMultiTensor) {
  const SgdSpec spec{dtype(), dtype(), 0.9, 0.1, 1e-2, true};
  const KernelSource ks = emit_sgd_update(spec);
  std::vector<Tensor> params, grads, vels;
  for (size_t k = 0; k < kSizes.size(); ++k) {
    params.push_back(random({kSizes[k]}, 20 + uint32_t(k)));
    grads.push_back(random({kSizes[k]}, 30 + uint32_t(k)));
    vels.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 40 + uint32_t(k))));
  }
  std::vector<std::vector<const Tensor*>> tensors;
  for (size_t k = 0; k < kSizes.size(); ++k) tensors.push_back({&params[k], &grads[k], &vels[k]});
  const std::vector<DeviceBuffer> buffers = run_multi_tensor(ks, tensors, 0.05f, 1.0f);
  Attrs attrs;
  attrs.set("momentum", spec.momentum);
  attrs.set("dampening", spec.dampening);
  attrs.set("weight_decay", spec.weight_decay);
  attrs.set("nesterov", int64_t(spec.nesterov));
  for (size_t k = 0; k < kSizes.size(); ++k) {
    Tensor p = to_f32(params[k]), g = to_f32(grads[k]), v = vels[k], lr_t = make(DType::F32, {}, {0.05});
    Tensor p_out(p.type), v_out(v.type);
    run_cpu("SgdUpdate", attrs, {&p, &g, &v, &lr_t}, {&p_out, &v_out});
    expect_close(download(buffers[3 * k], params[k].type), p_out, dtype(),
                 ks.name + " param " + std::to_string(k));
    expect_close(download(buffers[3 * k + 2], v.type), v_out, dtype(),
                 ks.name + " velocity " + std::to_string(k));
  }
}

// apply = false: the kernel leaves every parameter and state as it was (a skipped step).
TEST_P(CudaKernels, AdamMultiTensorThatDoesNotApplyKeepsTheStates) {
  const KernelSource ks = emit_adam_update(AdamSpec{dtype(), dtype(), 0.9, 0.999, 1e-8, 0.0, false});
  const Tensor p = random({kSizes[1]}, 51), g = random({kSizes[1]}, 61),
               m = make(DType::F32, {kSizes[1]}, random_values(kSizes[1], 71, -0.1, 0.1)),
               v = make(DType::F32, {kSizes[1]}, random_values(kSizes[1], 81, 0.0, 0.01));
  for (bool apply : {false, true}) {
    const std::vector<DeviceBuffer> buffers = run_multi_tensor(ks, {{&p, &g, &m, &v}}, 1e-2f, 1.0f, apply);
    EXPECT_EQ(download(buffers[0], p.type) == p, !apply) << "param, apply " << apply;
    EXPECT_EQ(download(buffers[2], m.type) == m, !apply) << "m, apply " << apply;
    EXPECT_EQ(download(buffers[3], v.type) == v, !apply) << "v, apply " << apply;
  }
}

TEST_P(CudaKernels, AdamMultiTensor) {
  for (const AdamSpec& spec : {AdamSpec{dtype(), dtype(), 0.9, 0.999, 1e-8, 1e-2, false},
                               AdamSpec{dtype(), dtype(), 0.8, 0.95, 1e-6, 0.1, true}}) {
    const KernelSource ks = emit_adam_update(spec);
    std::vector<Tensor> params, grads, ms, vs;
    for (size_t k = 0; k < kSizes.size(); ++k) {
      params.push_back(random({kSizes[k]}, 50 + uint32_t(k)));
      grads.push_back(random({kSizes[k]}, 60 + uint32_t(k)));
      ms.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 70 + uint32_t(k), -0.1, 0.1)));
      vs.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 80 + uint32_t(k), 0.0, 0.01)));
    }
    std::vector<std::vector<const Tensor*>> tensors;
    for (size_t k = 0; k < kSizes.size(); ++k) tensors.push_back({&params[k], &grads[k], &ms[k], &vs[k]});
    const float lr = 1e-2f, step = 3.0f;
    const std::vector<DeviceBuffer> buffers = run_multi_tensor(ks, tensors, lr, step);
    Attrs attrs;
    attrs.set("beta1", spec.beta1);
    attrs.set("beta2", spec.beta2);
    attrs.set("eps", spec.eps);
    attrs.set("weight_decay", spec.weight_decay);
    attrs.set("decoupled", int64_t(spec.decoupled));
    for (size_t k = 0; k < kSizes.size(); ++k) {
      Tensor p = to_f32(params[k]), g = to_f32(grads[k]), m = ms[k], v = vs[k];
      Tensor lr_t = make(DType::F32, {}, {lr}), step_t = make(DType::F32, {}, {step});
      Tensor p_out(p.type), m_out(m.type), v_out(v.type);
      run_cpu("AdamUpdate", attrs, {&p, &g, &m, &v, &lr_t, &step_t}, {&p_out, &m_out, &v_out});
      const std::string tag = ks.name + " tensor " + std::to_string(k);
      expect_close(download(buffers[4 * k], params[k].type), p_out, dtype(), tag + " param");
      expect_close(download(buffers[4 * k + 2], m.type), m_out, dtype(), tag + " m");
      expect_close(download(buffers[4 * k + 3], v.type), v_out, dtype(), tag + " v");
    }
  }
}

// Mixed precision's update: f32 parameters and moments, the gradient in the case's type (its Cast to
// f32 folded into the update), against the CPU kernel on the same half gradient (which widens it).
TEST_P(CudaKernels, AdamOfF32ParamsWithTheCaseTypeGradient) {
  const AdamSpec spec{DType::F32, dtype(), 0.9, 0.999, 1e-8, 0.0, false};
  const KernelSource ks = emit_adam_update(spec);
  std::vector<Tensor> params, grads, ms, vs;
  for (size_t k = 0; k < kSizes.size(); ++k) {
    params.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 150 + uint32_t(k))));
    grads.push_back(random({kSizes[k]}, 160 + uint32_t(k)));
    ms.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 170 + uint32_t(k), -0.1, 0.1)));
    vs.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 180 + uint32_t(k), 0.0, 0.01)));
  }
  std::vector<std::vector<const Tensor*>> tensors;
  for (size_t k = 0; k < kSizes.size(); ++k) tensors.push_back({&params[k], &grads[k], &ms[k], &vs[k]});
  const std::vector<DeviceBuffer> buffers = run_multi_tensor(ks, tensors, 1e-2f, 2.0f);
  Attrs attrs;
  attrs.set("beta1", spec.beta1);
  attrs.set("beta2", spec.beta2);
  attrs.set("eps", spec.eps);
  for (size_t k = 0; k < kSizes.size(); ++k) {
    Tensor lr_t = make(DType::F32, {}, {1e-2}), step_t = make(DType::F32, {}, {2.0});
    Tensor p_out(params[k].type), m_out(ms[k].type), v_out(vs[k].type);
    run_cpu("AdamUpdate", attrs, {&params[k], &grads[k], &ms[k], &vs[k], &lr_t, &step_t},
            {&p_out, &m_out, &v_out});
    const std::string tag = ks.name + " tensor " + std::to_string(k);
    expect_close(download(buffers[4 * k], params[k].type), p_out, DType::F32, tag + " param");
    expect_close(download(buffers[4 * k + 2], ms[k].type), m_out, DType::F32, tag + " m");
    expect_close(download(buffers[4 * k + 3], vs[k].type), v_out, DType::F32, tag + " v");
  }
}

// Plain RMSprop with momentum and weight decay (state1: the momentum buffer), and centered
// RMSprop (state1: the gradient average).
TEST_P(CudaKernels, RmspropMultiTensor) {
  for (const RmspropSpec& spec : {RmspropSpec{dtype(), dtype(), 0.99, 1e-8, 1e-2, 0.9, false},
                                  RmspropSpec{dtype(), dtype(), 0.9, 1e-6, 0.0, 0.0, true}}) {
    const KernelSource ks = emit_rmsprop_update(spec);
    std::vector<Tensor> params, grads, squares, extras;
    for (size_t k = 0; k < kSizes.size(); ++k) {
      params.push_back(random({kSizes[k]}, 90 + uint32_t(k)));
      grads.push_back(random({kSizes[k]}, 100 + uint32_t(k)));
      squares.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 110 + uint32_t(k), 0.5, 1.0)));
      extras.push_back(make(DType::F32, {kSizes[k]}, random_values(kSizes[k], 120 + uint32_t(k), -0.1, 0.1)));
    }
    std::vector<std::vector<const Tensor*>> tensors;
    for (size_t k = 0; k < kSizes.size(); ++k)
      tensors.push_back({&params[k], &grads[k], &squares[k], &extras[k]});
    const float lr = 1e-2f;
    const std::vector<DeviceBuffer> buffers = run_multi_tensor(ks, tensors, lr, 1.0f);
    Attrs attrs;
    attrs.set("alpha", spec.alpha);
    attrs.set("eps", spec.eps);
    attrs.set("weight_decay", spec.weight_decay);
    attrs.set("momentum", spec.momentum);
    attrs.set("centered", int64_t(spec.centered));
    for (size_t k = 0; k < kSizes.size(); ++k) {
      Tensor p = to_f32(params[k]), g = to_f32(grads[k]), sq = squares[k], x = extras[k];
      Tensor lr_t = make(DType::F32, {}, {lr});
      Tensor p_out(p.type), sq_out(sq.type), x_out(x.type);
      Tensor* grad_avg = spec.centered ? &x : nullptr;
      Tensor* buf = spec.centered ? nullptr : &x;
      run_cpu("RmspropUpdate", attrs, {&p, &g, &sq, &lr_t, grad_avg, buf},
              {&p_out, &sq_out, spec.centered ? &x_out : nullptr, spec.centered ? nullptr : &x_out});
      const std::string tag = ks.name + " tensor " + std::to_string(k);
      expect_close(download(buffers[4 * k], params[k].type), p_out, dtype(), tag + " param");
      expect_close(download(buffers[4 * k + 2], sq.type), sq_out, dtype(), tag + " square_avg");
      expect_close(download(buffers[4 * k + 3], x.type), x_out, dtype(), tag + " grad_avg / buffer");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudaKernels, ::testing::Values(DType::F32, DType::F16, DType::BF16),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(dtype_name(info.param));
                         });

}  // namespace
}  // namespace dlc::cuda::test
