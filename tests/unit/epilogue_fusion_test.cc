// Epilogue fusion (passes/epilogue_fusion.h) and the fused ops it produces: the CPU MatMul kernel
// with transposes, bias, alpha, a residual and a Relu against a naive reference (f32 on oneDNN, f64
// on the plain loop, f16/bf16 widened), the Relu epilogues of MatMul and Conv keeping NaN and -0;
// each rewrite (GEMM, convolution and batch-norm epilogues) on small graphs run unfused and fused
// on the CPU runtime (f32 bit for bit); the cases where a rewrite must not fire; shape inference,
// flops, the CUDA bindings and the gradients of fused ops.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

#include "codegen/cuda/step_binding.h"
#include "codegen/flops.h"
#include "codegen/lower.h"
#include "dlc/error.h"
#include "dlc/half.h"
#include "dlc/session.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/autodiff.h"
#include "passes/epilogue_fusion.h"
#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc {
namespace {

using ir::OpKind;

// ---- the kernel

// act(alpha * op(a) @ op(b) + bias + residual) for a [B, M|K, K|M] and b [K|N, N|K] (b shared by
// the batch), act a Relu or nothing; an empty bias or residual is absent.
std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b,
                              const std::vector<float>& bias, int64_t B, int64_t M, int64_t K, int64_t N,
                              bool ta, bool tb, double alpha, bool relu = false,
                              const std::vector<float>& residual = {}) {
  std::vector<double> c(size_t(B * M * N));
  for (int64_t i = 0; i < B; ++i)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += double(a[size_t(i * M * K + (ta ? k * M + m : m * K + k))]) *
                 double(b[size_t(tb ? n * K + k : k * N + n)]);
        const size_t at = size_t((i * M + m) * N + n);
        const double y =
            alpha * acc + (bias.empty() ? 0.0 : bias[size_t(n)]) + (residual.empty() ? 0.0 : residual[at]);
        c[at] = relu && y < 0 ? 0.0 : y;
      }
  return c;
}

// Runs the MatMul kernel on `t` copies of the operands (f32 values rounded to t first); an empty
// bias or residual is absent.
std::vector<double> run_kernel(DType t, const std::vector<float>& a, const Shape& a_dims,
                               const std::vector<float>& b, const Shape& b_dims,
                               const std::vector<float>& bias, const Shape& bias_dims, const Shape& c_dims,
                               const Attrs& attrs, const std::vector<float>& residual = {}) {
  const auto tensor = [&](const std::vector<float>& v, const Shape& dims) {
    return Tensor::from_double(t, std::vector<double>(v.begin(), v.end()), dims);
  };
  Tensor ta = tensor(a, a_dims), tb = tensor(b, b_dims),
         tbias = bias.empty() ? Tensor() : tensor(bias, bias_dims),
         tres = residual.empty() ? Tensor() : tensor(residual, c_dims);
  Tensor c = Tensor::from_double(t, std::vector<double>(size_t(num_elements(c_dims))), c_dims);
  std::vector<cpu::TensorView> in = {cpu::test::view(t, a_dims, ta.bytes.data()),
                                     cpu::test::view(t, b_dims, tb.bytes.data())};
  in.push_back(cpu::test::view(t, bias_dims, bias.empty() ? nullptr : tbias.bytes.data()));
  if (!residual.empty()) in.push_back(cpu::test::view(t, c_dims, tres.bytes.data()));
  cpu::KernelContext ctx =
      cpu::test::kernel_context(attrs, std::move(in), {cpu::test::view(t, c_dims, c.bytes.data())}, "MatMul");
  cpu::kernel_MatMul(ctx);
  return c.as_double();
}

// Values rounded to dtype `t` (the operands the kernel sees).
std::vector<float> rounded(DType t, const std::vector<float>& v) {
  const std::vector<double> r =
      Tensor::from_double(t, std::vector<double>(v.begin(), v.end()), {int64_t(v.size())}).as_double();
  return std::vector<float>(r.begin(), r.end());
}

TEST(EpilogueFusionKernel, TransposesBiasAlphaResidualAndReluMatchTheReference) {
  const int64_t B = 3, M = 5, K = 7, N = 4;
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (double alpha : {1.0, 0.25})
          for (bool with_bias : {false, true})
            for (bool with_residual : {false, true})
              for (bool relu : {false, true}) {
                const std::vector<float> a = rounded(t, cpu::test::random_values(B * M * K, 1));
                const std::vector<float> b = rounded(t, cpu::test::random_values(K * N, 2));
                const std::vector<float> bias =
                    with_bias ? rounded(t, cpu::test::random_values(N, 3)) : std::vector<float>{};
                const std::vector<float> residual =
                    with_residual ? rounded(t, cpu::test::random_values(B * M * N, 4)) : std::vector<float>{};
                Attrs attrs;
                attrs.set("transpose_a", int64_t(ta));
                attrs.set("transpose_b", int64_t(tb));
                if (alpha != 1.0) attrs.set("alpha", alpha);
                if (relu) attrs.set("activation", std::string("relu"));
                const std::vector<double> got =
                    run_kernel(t, a, ta ? Shape{B, K, M} : Shape{B, M, K}, b, tb ? Shape{N, K} : Shape{K, N},
                               bias, Shape{1, 1, N}, {B, M, N}, attrs, residual);
                const std::vector<double> want =
                    reference(a, b, bias, B, M, K, N, ta, tb, alpha, relu, residual);
                // f16/bf16 results are rounded once to 11 / 8 significant bits.
                const double tol = t == DType::BF16 ? 2e-2 : t == DType::F16 ? 4e-3 : 1e-5;
                for (size_t i = 0; i < want.size(); ++i)
                  ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i])))
                      << dtype_name(t) << " ta=" << ta << " tb=" << tb << " alpha=" << alpha
                      << " bias=" << with_bias << " residual=" << with_residual << " relu=" << relu << " at "
                      << i;
              }
}

TEST(EpilogueFusionKernel, EmptyInnerDimGivesTheBiasAndResidual) {
  const std::vector<float> bias = {1.5f, -2.f, 0.5f};
  Attrs attrs;
  attrs.set("alpha", 3.0);
  const std::vector<double> got = run_kernel(DType::F32, {}, {2, 0}, {}, {0, 3}, bias, {3}, {2, 3}, attrs);
  EXPECT_EQ(got, (std::vector<double>{1.5, -2, 0.5, 1.5, -2, 0.5}));
  const std::vector<double> with_residual =
      run_kernel(DType::F32, {}, {2, 0}, {}, {0, 3}, bias, {3}, {2, 3}, attrs, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(with_residual, (std::vector<double>{2.5, 0, 3.5, 5.5, 3, 6.5}));
}

// The Relu epilogue keeps NaN and -0 like the Relu kernel (torch.relu), which oneDNN's relu
// post-op would not (it gives 0 for NaN); f32 on oneDNN, f64 on the loop, an empty inner dim.
TEST(EpilogueFusionKernel, ReluEpilogueKeepsNaNAndNegativeZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Attrs attrs;
  attrs.set("activation", std::string("relu"));
  for (DType t : {DType::F32, DType::F64}) {
    // Row 0 reads a NaN, so all its columns are NaN; rows 1 and 2 have negatives.
    const std::vector<float> a = {nan, 1.f, -1.f, 0.f, 2.f, 1.f};   // [3, 2]
    const std::vector<float> b = {0.f, 1.f, -3.f, 0.f, -1.f, 4.f};  // [2, 3]
    const std::vector<float> bias = {-0.f, 0.5f, -20.f};
    const std::vector<double> got = run_kernel(t, a, {3, 2}, b, {2, 3}, bias, {3}, {3, 3}, attrs);
    for (int j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(got[size_t(j)])) << dtype_name(t) << " column " << j;
    // Row 1: -1*[0,1,-3] + 0*[0,-1,4] + bias = [0, -0.5, -17] -> [0, 0, 0] (+0).
    EXPECT_EQ(got[3], 0.0);
    EXPECT_EQ(got[4], 0.0);
    EXPECT_FALSE(std::signbit(got[4]));
    EXPECT_EQ(got[5], 0.0);
    // Row 2: 2*[0,1,-3] + 1*[0,-1,4] + bias = [0, 1.5, -22] -> [0, 1.5, 0].
    EXPECT_EQ(got[7], 1.5);
    EXPECT_EQ(got[8], 0.0);
  }
  // The unfused Relu of the same f32 product, bit for bit (its -0 and NaN included).
  const std::vector<float> a = {nan, 1.f, -1.f, 0.f, 2.f, 1.f}, b = {0.f, 1.f, -3.f, 0.f, -1.f, 4.f},
                           bias = {-0.f, 0.5f, -20.f};
  const std::vector<double> fused = run_kernel(DType::F32, a, {3, 2}, b, {2, 3}, bias, {3}, {3, 3}, attrs);
  const std::vector<double> plain = run_kernel(DType::F32, a, {3, 2}, b, {2, 3}, bias, {3}, {3, 3}, {});
  for (size_t i = 0; i < plain.size(); ++i) {
    const double want = plain[i] < 0 ? 0.0 : plain[i];
    EXPECT_EQ(std::isnan(fused[i]), std::isnan(want)) << i;
    if (!std::isnan(want)) {
      EXPECT_EQ(fused[i], want) << i;
      EXPECT_EQ(std::signbit(fused[i]), std::signbit(want)) << i;
    }
  }
  // An empty inner dim: the Relu of the bias.
  const std::vector<double> empty =
      run_kernel(DType::F32, {}, {2, 0}, {}, {0, 3}, {1.5f, -2.f, nan}, {3}, {2, 3}, attrs);
  EXPECT_EQ(empty[0], 1.5);
  EXPECT_EQ(empty[1], 0.0);
  EXPECT_TRUE(std::isnan(empty[2]));
  // A -0 result (an empty product scaled by -1, on the loop) stays -0, as the Relu kernel keeps it.
  Attrs neg = attrs;
  neg.set("alpha", -1.0);
  const std::vector<double> zeros = run_kernel(DType::F32, {}, {2, 0}, {}, {0, 3}, {}, {}, {2, 3}, neg);
  for (double z : zeros) {
    EXPECT_EQ(z, 0.0);
    EXPECT_TRUE(std::signbit(z));
  }
}

// Conv with a Relu epilogue: the unfused Conv's result through `x < 0 ? 0 : x`, bit for bit
// (NaN kept), with and without a bias, through a cached primitive too.
TEST(EpilogueFusionKernel, ConvReluEpilogueIsTheUnfusedRelu) {
  const int64_t N = 2, C = 3, H = 6, W = 5, M = 4, KH = 3, KW = 3;
  std::vector<float> x = cpu::test::random_values(N * C * H * W, 7),
                     w = cpu::test::random_values(M * C * KH * KW, 8), b = cpu::test::random_values(M, 9);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  for (bool with_bias : {false, true}) {
    Attrs attrs;
    attrs.set("kernel_shape", Shape{KH, KW});
    attrs.set("strides", Shape{1, 1});
    attrs.set("pads", Shape{1, 1, 1, 1});
    attrs.set("dilations", Shape{1, 1});
    attrs.set("group", int64_t(1));
    Attrs relu_attrs = attrs;
    relu_attrs.set("activation", std::string("relu"));
    const auto run = [&](const Attrs& at, bool cached) {
      std::vector<float> y(size_t(N * M * H * W), 123.f);
      std::vector<cpu::TensorView> in = {cpu::test::view(x, {N, C, H, W}),
                                         cpu::test::view(w, {M, C, KH, KW})};
      if (with_bias) in.push_back(cpu::test::view(b, {M}));
      cpu::KernelContext ctx =
          cpu::test::kernel_context(at, std::move(in), {cpu::test::view(y, {N, M, H, W})}, "Conv");
      std::unique_ptr<cpu::KernelState> state;
      if (cached) ctx.state = &state;
      for (int k = 0; k < (cached ? 2 : 1); ++k) cpu::kernel_Conv(ctx);
      return y;
    };
    const std::vector<float> plain = run(attrs, false);
    int nans = 0, zeros = 0;
    for (bool cached : {false, true}) {
      const std::vector<float> fused = run(relu_attrs, cached);
      for (size_t i = 0; i < plain.size(); ++i) {
        const float want = plain[i] < 0 ? 0.f : plain[i];
        ASSERT_EQ(std::memcmp(&fused[i], &want, sizeof(float)), 0)
            << "bias=" << with_bias << " at " << i << ": " << fused[i] << " vs " << want;
        nans += std::isnan(want);
        zeros += want == 0.f;
      }
    }
    EXPECT_GT(nans, 0);
    EXPECT_GT(zeros, 0);
  }
}

// ---- the rewrites

using Build = std::function<void(ir::Graph&)>;

ir::Value* op(ir::Graph& g, OpKind kind, std::vector<ir::Value*> in, Attrs attrs = {},
              std::string name = "") {
  return g.add_node(kind, std::move(in), std::move(attrs), {name})->outputs[0];
}

Attrs perm(std::vector<int64_t> p) {
  Attrs a;
  a.set("perm", p);
  return a;
}

Attrs flags(bool ta, bool tb) {
  Attrs a;
  if (ta) a.set("transpose_a", int64_t(1));
  if (tb) a.set("transpose_b", int64_t(1));
  return a;
}

// Cast(MatMul(Cast(a to bf16), Cast(b to bf16)) to f32): mixed precision's half MatMul, whose f32
// result no epilogue folds into (a fold never crosses a Cast).
ir::Value* bf16_matmul_as_f32(ir::Graph& g, ir::Value* a, ir::Value* b) {
  const auto cast = [&g](ir::Value* v, const char* to) {
    Attrs attrs;
    attrs.set("to", std::string(to));
    return op(g, OpKind::Cast, {v}, attrs);
  };
  return cast(op(g, OpKind::MatMul, {cast(a, "bf16"), cast(b, "bf16")}), "f32");
}

ir::Value* scalar(ir::Graph& g, DType t, double v) {
  return g.add_constant(g.unique_value_name("c"), Tensor::from_double(t, {v}, {}));
}

std::vector<Tensor> run_graph(const ir::Graph& g) {
  std::unique_ptr<Session> s = Session::create(codegen::lower_to_plan(g), {1});
  uint32_t seed = 1;
  for (const ir::Value* v : g.inputs()) {
    const std::vector<float> x = cpu::test::random_values(v->type.numel(), seed++);
    s->set_input(v->name,
                 Tensor::from_double(v->type.dtype, std::vector<double>(x.begin(), x.end()), v->type.shape));
  }
  s->run();
  std::vector<Tensor> outs;
  for (const Session::Signature& o : s->outputs()) outs.push_back(s->output(o.name));
  return outs;
}

// Fuses a copy of the graph `build` makes; expects `want` counts, outputs of the same names and
// types, and the unfused values (f32 bit for bit, 16-bit within one rounding).
void check(const Build& build, const passes::EpilogueFusionCounts& want) {
  ir::Graph plain, fused;
  build(plain);
  build(fused);
  const passes::EpilogueFusionCounts got = passes::fuse_epilogues(fused);
  ir::verify(fused);
  const std::string text = ir::print_graph(fused);
  EXPECT_EQ(got.operand_transposes, want.operand_transposes) << text;
  EXPECT_EQ(got.result_transposes, want.result_transposes) << text;
  EXPECT_EQ(got.scales, want.scales) << text;
  EXPECT_EQ(got.half_scales, want.half_scales) << text;
  EXPECT_EQ(got.operand_scales, want.operand_scales) << text;
  EXPECT_EQ(got.half_operand_scales, want.half_operand_scales) << text;
  EXPECT_EQ(got.half_biases, want.half_biases) << text;
  EXPECT_EQ(got.biases, want.biases) << text;
  EXPECT_EQ(got.residuals, want.residuals) << text;
  EXPECT_EQ(got.activations, want.activations) << text;
  EXPECT_EQ(got.conv_activations, want.conv_activations) << text;
  EXPECT_EQ(got.conv_residuals, want.conv_residuals) << text;
  EXPECT_EQ(got.norm_activations, want.norm_activations) << text;
  EXPECT_EQ(got.norm_relu_grads, want.norm_relu_grads) << text;
  // A half scale takes its two Casts with it; a half bias takes two and adds one (the bias's).
  EXPECT_EQ(fused.num_nodes(),
            plain.num_nodes() -
                size_t(got.total() + 2 * (got.half_scales + got.half_operand_scales) + got.half_biases))
      << text;
  ASSERT_EQ(fused.outputs().size(), plain.outputs().size());
  for (size_t i = 0; i < plain.outputs().size(); ++i) {
    EXPECT_EQ(fused.outputs()[i]->name, plain.outputs()[i]->name);
    EXPECT_EQ(fused.outputs()[i]->type, plain.outputs()[i]->type);
    EXPECT_EQ(fused.outputs()[i]->role, plain.outputs()[i]->role);
  }
  const std::vector<Tensor> a = run_graph(plain), b = run_graph(fused);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].type.dtype == DType::F32) {
      EXPECT_EQ(a[i], b[i]) << "output " << i << "\n" << text;
      continue;
    }
    const std::vector<double> x = a[i].as_double(), y = b[i].as_double();
    for (size_t k = 0; k < x.size(); ++k)
      ASSERT_NEAR(x[k], y[k], 2e-2 * (1 + std::abs(x[k]))) << "output " << i;
  }
}

TEST(EpilogueFusion, OperandTransposesFoldIntoEveryMatMulUser) {
  check(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {5, 3}});
        ir::Value* dy = g.add_input("dy", {DType::F32, {5, 4}});
        ir::Value* w = g.add_input("w", {DType::F32, {4, 3}});
        ir::Value* wt = op(g, OpKind::Transpose, {w}, perm({1, 0}));  // the forward weight
        g.add_output(op(g, OpKind::MatMul, {x, wt}, {}, "y"));
        g.add_output(op(g, OpKind::MatMul, {dy, wt}, flags(false, true), "dx"));
        // A batched operand a, and a Transpose used twice by one MatMul.
        ir::Value* q = g.add_input("q", {DType::F32, {2, 6, 5}});
        ir::Value* qt = op(g, OpKind::Transpose, {q}, perm({0, 2, 1}));
        ir::Value* z = g.add_input("z", {DType::F32, {6, 3}});
        g.add_output(op(g, OpKind::MatMul, {qt, z}, {}, "p"));
        ir::Value* s = g.add_input("s", {DType::F32, {3, 3}});
        ir::Value* st = op(g, OpKind::Transpose, {s}, perm({1, 0}));
        g.add_output(op(g, OpKind::MatMul, {st, st}, {}, "ss"));
      },
      {.operand_transposes = 3});
}

TEST(EpilogueFusion, ResultTransposeKeepsItsValue) {
  check(
      [](ir::Graph& g) {
        // The weight gradient of a linear layer: Transpose(MatMul(x^T, dy)) -> MatMul(dy^T, x).
        ir::Value* x = g.add_input("x", {DType::F32, {8, 3}});
        ir::Value* dy = g.add_input("dy", {DType::F32, {8, 4}});
        ir::Value* m = op(g, OpKind::MatMul, {x, dy}, flags(true, false));
        ir::Value* t = op(g, OpKind::Transpose, {m}, perm({1, 0}), "w@grad");
        g.add_output(t);
        // Batched, b broadcast, both flags.
        ir::Value* a = g.add_input("a", {DType::F32, {2, 6, 5}});
        ir::Value* b = g.add_input("b", {DType::F32, {7, 6}});
        ir::Value* r = op(g, OpKind::MatMul, {a, b}, flags(true, true));  // [2, 5, 7]
        g.add_output(op(g, OpKind::Transpose, {r}, perm({0, 2, 1}), "rt"));
      },
      {.result_transposes = 2});
  // The taken-over value keeps its name and role.
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F32, {8, 3}});
  ir::Value* dy = g.add_input("dy", {DType::F32, {8, 4}});
  ir::Value* t =
      op(g, OpKind::Transpose, {op(g, OpKind::MatMul, {x, dy}, flags(true, false))}, perm({1, 0}), "w@grad");
  t->role = ir::Role::Gradient;
  g.add_output(t);
  passes::fuse_epilogues(g);
  EXPECT_EQ(t->producer->op, OpKind::MatMul);
  EXPECT_EQ(t->role, ir::Role::Gradient);
  EXPECT_EQ(t->producer->inputs[0], dy);
  EXPECT_EQ(t->producer->attrs.i("transpose_a"), 1);
  EXPECT_EQ(t->producer->attrs.i("transpose_b", 0), 0);
}

TEST(EpilogueFusion, BiasAndScaleEpilogues) {
  check(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {2, 5, 3}});
        ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
        ir::Value* b = g.add_input("b", {DType::F32, {4}});
        g.add_output(op(g, OpKind::Add, {b, op(g, OpKind::MatMul, {x, w})}, {}, "linear"));  // bias first
        // Scale, then a [1, 1, n] bias: alpha * product + bias.
        ir::Value* b3 = g.add_input("b3", {DType::F32, {1, 1, 4}});
        ir::Value* s = op(g, OpKind::Mul, {op(g, OpKind::MatMul, {x, w}), scalar(g, DType::F32, 0.125)});
        g.add_output(op(g, OpKind::Add, {s, b3}, {}, "scaled"));
        // Scale first operand, no bias.
        g.add_output(
            op(g, OpKind::Mul, {scalar(g, DType::F32, -3.0), op(g, OpKind::MatMul, {x, w})}, {}, "neg"));
      },
      {.scales = 2, .biases = 2});
}

Attrs conv_attrs() {
  Attrs a;
  a.set("kernel_shape", Shape{3, 3});
  a.set("strides", Shape{1, 1});
  a.set("pads", Shape{1, 1, 1, 1});
  a.set("dilations", Shape{1, 1});
  a.set("group", int64_t(1));
  return a;
}

TEST(EpilogueFusion, ReluEpilogues) {
  check(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {2, 5, 3}});
        ir::Value* w = g.add_input("w", {DType::F32, {4, 3}});
        ir::Value* b = g.add_input("b", {DType::F32, {4}});
        ir::Value* wt = op(g, OpKind::Transpose, {w}, perm({1, 0}));
        // A linear layer: Transpose, bias and Relu all fold; the Relu's value is kept.
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::Add, {op(g, OpKind::MatMul, {x, wt}), b})}, {}, "h"));
        // Scale, bias, Relu.
        ir::Value* s = op(g, OpKind::Mul, {op(g, OpKind::MatMul, {x, wt}), scalar(g, DType::F32, -0.5)});
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::Add, {s, b})}, {}, "scaled"));
        // A bare MatMul, whose Relu result is read twice (as ReluGrad and the next layer would).
        ir::Value* r = op(g, OpKind::Relu, {op(g, OpKind::MatMul, {x, wt})}, {}, "bare");
        g.add_output(op(g, OpKind::Add, {r, r}, {}, "twice"));
        g.add_output(r);
        // Conv with and without its bias input.
        ir::Value* img = g.add_input("img", {DType::F32, {2, 3, 5, 4}});
        ir::Value* k = g.add_input("k", {DType::F32, {6, 3, 3, 3}});
        ir::Value* kb = g.add_input("kb", {DType::F32, {6}});
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::Conv, {img, k}, conv_attrs())}, {}, "conv"));
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::Conv, {img, k, kb}, conv_attrs())}, {}, "conv_bias"));
      },
      {.operand_transposes = 1, .scales = 1, .biases = 2, .activations = 3, .conv_activations = 2});
  // The fused MatMul carries the attribute and takes over the Relu's value.
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F32, {2, 3}});
  ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
  ir::Value* r = op(g, OpKind::Relu, {op(g, OpKind::MatMul, {x, w})}, {}, "r");
  g.add_output(r);
  passes::fuse_epilogues(g);
  ASSERT_EQ(r->producer->op, OpKind::MatMul);
  EXPECT_EQ(r->producer->attrs.s("activation"), "relu");
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(EpilogueFusion, ReluEpiloguesInHalfPrecision) {
  for (DType t : {DType::F16, DType::BF16})
    check(
        [t](ir::Graph& g) {
          ir::Value* x = g.add_input("x", {t, {6, 8}});
          ir::Value* w = g.add_input("w", {t, {8, 5}});
          ir::Value* b = g.add_input("b", {t, {5}});
          g.add_output(
              op(g, OpKind::Relu, {op(g, OpKind::Add, {op(g, OpKind::MatMul, {x, w}), b})}, {}, "y"));
          ir::Value* img = g.add_input("img", {t, {1, 2, 4, 4}});
          ir::Value* k = g.add_input("k", {t, {3, 2, 3, 3}});
          g.add_output(op(g, OpKind::Relu, {op(g, OpKind::Conv, {img, k}, conv_attrs())}, {}, "c"));
        },
        {.biases = 1, .activations = 1, .conv_activations = 1});
}

TEST(EpilogueFusion, ReluEpilogueMustNotFire) {
  check(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {5, 3}});
        ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
        ir::Value* b = g.add_input("b", {DType::F32, {4}});
        // The pre-activation has another user (or is a graph output).
        ir::Value* m = op(g, OpKind::MatMul, {x, w});
        g.add_output(op(g, OpKind::Relu, {m}, {}, "r1"));
        g.add_output(op(g, OpKind::Sigmoid, {m}, {}, "other_user"));
        ir::Value* m2 = op(g, OpKind::MatMul, {x, w}, {}, "pre_out");
        g.add_output(op(g, OpKind::Relu, {m2}, {}, "r2"));
        g.add_output(m2);
        // A Relu after a Cast (mixed precision) or after another op between.
        g.add_output(op(g, OpKind::Relu, {bf16_matmul_as_f32(g, x, w)}, {}, "after_cast"));
        ir::Value* n = op(g, OpKind::Neg, {op(g, OpKind::MatMul, {x, w})});
        g.add_output(op(g, OpKind::Relu, {n}, {}, "after_neg"));
        // A bias or scale after the Relu stays (only the Relu folds), a second Relu stays too.
        ir::Value* r3 = op(g, OpKind::Relu, {op(g, OpKind::MatMul, {x, w})});
        g.add_output(op(g, OpKind::Add, {r3, b}, {}, "bias_after"));
        ir::Value* r4 = op(g, OpKind::Relu, {op(g, OpKind::MatMul, {x, w})});
        g.add_output(op(g, OpKind::Mul, {r4, scalar(g, DType::F32, 2.0)}, {}, "scale_after"));
        ir::Value* r5 = op(g, OpKind::Relu, {op(g, OpKind::MatMul, {x, w})});
        g.add_output(op(g, OpKind::Relu, {r5}, {}, "relu_twice"));
        // An integer MatMul; a ConvTranspose; a Conv whose result has another user.
        ir::Value* i = g.add_input("i", {DType::I32, {2, 2}});
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::MatMul, {i, i})}, {}, "int"));
        ir::Value* img = g.add_input("img", {DType::F32, {1, 2, 4, 4}});
        ir::Value* k = g.add_input("k", {DType::F32, {2, 3, 3, 3}});
        Attrs ct = conv_attrs();
        ct.set("output_padding", Shape{0, 0});
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::ConvTranspose, {img, k}, ct)}, {}, "deconv"));
        ir::Value* k2 = g.add_input("k2", {DType::F32, {3, 2, 3, 3}});
        ir::Value* c = op(g, OpKind::Conv, {img, k2}, conv_attrs());
        g.add_output(op(g, OpKind::Relu, {c}, {}, "conv_relu"));
        g.add_output(op(g, OpKind::Add, {c, c}, {}, "conv_other_user"));
      },
      {.activations = 3});  // only r3, r4 and r5 (the first Relu of "relu_twice")
}

TEST(EpilogueFusion, AllRewritesInHalfPrecision) {
  for (DType t : {DType::F16, DType::BF16})
    check(
        [t](ir::Graph& g) {
          ir::Value* x = g.add_input("x", {t, {6, 8}});
          ir::Value* w = g.add_input("w", {t, {5, 8}});
          ir::Value* b = g.add_input("b", {t, {5}});
          ir::Value* wt = op(g, OpKind::Transpose, {w}, perm({1, 0}));
          ir::Value* y = op(g, OpKind::Mul, {op(g, OpKind::MatMul, {x, wt}), scalar(g, t, 0.5)});
          g.add_output(op(g, OpKind::Add, {y, b}, {}, "y"));
        },
        {.operand_transposes = 1, .scales = 1, .biases = 1});
}

// Mixed precision's attention scores: Cast(Mul(Cast(MatMul_half to f32), k) to half) is the
// half MatMul with alpha k (rounded once instead of twice: the same bits for k = 1/8).
TEST(EpilogueFusion, ScaleBetweenMixedPrecisionCasts) {
  for (DType t : {DType::F16, DType::BF16})
    for (double k : {0.125, 0.3})
      check(
          [t, k](ir::Graph& g) {
            ir::Value* a = g.add_input("a", {t, {2, 4, 8}});
            ir::Value* b = g.add_input("b", {t, {2, 8, 4}});
            Attrs to_f32, to_half;
            to_f32.set("to", std::string("f32"));
            to_half.set("to", std::string(dtype_name(t)));
            ir::Value* scores = op(g, OpKind::Cast, {op(g, OpKind::MatMul, {a, b})}, to_f32);
            ir::Value* scaled = op(g, OpKind::Mul, {scores, scalar(g, DType::F32, k)});
            g.add_output(op(g, OpKind::Cast, {scaled}, to_half, "scaled"));
          },
          {.half_scales = 1});
  // Not when the f32 scores are read elsewhere too.
  check(
      [](ir::Graph& g) {
        ir::Value* a = g.add_input("a", {DType::BF16, {4, 8}});
        ir::Value* b = g.add_input("b", {DType::BF16, {8, 4}});
        Attrs to_f32, to_half;
        to_f32.set("to", std::string("f32"));
        to_half.set("to", std::string("bf16"));
        ir::Value* scores = op(g, OpKind::Cast, {op(g, OpKind::MatMul, {a, b})}, to_f32, "scores");
        g.add_output(
            op(g, OpKind::Cast, {op(g, OpKind::Mul, {scores, scalar(g, DType::F32, 0.5)})}, to_half));
        g.add_output(scores);
      },
      {});
}

// Mixed precision's f32 bias Add of a half MatMul read in half (a query projection):
// Cast_half(Add(Cast_f32(MatMul_half), b)) is the half MatMul with b rounded to half as its bias,
// the sum rounded once (within one rounding of the unfused value), the bias on either side and
// of shape [n] or [1, 1, n]. Not when the f32 sum is read elsewhere, nor for a bias computed in
// the graph (it may come after the MatMul).
TEST(EpilogueFusion, BiasBetweenMixedPrecisionCasts) {
  for (DType t : {DType::F16, DType::BF16})
    for (bool bias_first : {false, true})
      check(
          [t, bias_first](ir::Graph& g) {
            ir::Value* a = g.add_input("a", {t, {2, 3, 8}});
            ir::Value* w = g.add_input("w", {t, {8, 4}});
            ir::Value* b = g.add_input("b", {DType::F32, bias_first ? Shape{1, 1, 4} : Shape{4}});
            Attrs to_f32, to_half;
            to_f32.set("to", std::string("f32"));
            to_half.set("to", std::string(dtype_name(t)));
            ir::Value* product = op(g, OpKind::Cast, {op(g, OpKind::MatMul, {a, w})}, to_f32);
            ir::Value* sum =
                op(g, OpKind::Add,
                   bias_first ? std::vector<ir::Value*>{b, product} : std::vector<ir::Value*>{product, b});
            g.add_output(op(g, OpKind::Cast, {sum}, to_half, "y"));
          },
          {.half_biases = 1});
  for (bool computed_bias : {false, true})
    check(
        [computed_bias](ir::Graph& g) {
          ir::Value* a = g.add_input("a", {DType::BF16, {3, 8}});
          ir::Value* w = g.add_input("w", {DType::BF16, {8, 4}});
          ir::Value* b = g.add_input("b", {DType::F32, {4}});
          Attrs to_f32, to_half;
          to_f32.set("to", std::string("f32"));
          to_half.set("to", std::string("bf16"));
          ir::Value* product = op(g, OpKind::Cast, {op(g, OpKind::MatMul, {a, w})}, to_f32);
          if (computed_bias) b = op(g, OpKind::Mul, {b, scalar(g, DType::F32, 2.0)});
          ir::Value* sum = op(g, OpKind::Add, {product, b}, {}, "sum");
          g.add_output(op(g, OpKind::Cast, {sum}, to_half, "y"));
          if (!computed_bias) g.add_output(sum);
        },
        {});
}

// Attention's score gradient, scaled by 1/sqrt(head size) and read by the query and key
// gradients' MatMuls (as operand a and as operand b): the scale becomes their alpha (f32 bit for
// bit for a power of two), also between mixed precision's casts; not for a scale that is not a
// power of two, nor when something other than a MatMul operand reads the scaled value.
TEST(EpilogueFusion, OperandScaleFoldsIntoEveryMatMulReader) {
  const auto build = [](double k, bool other_reader) {
    return [k, other_reader](ir::Graph& g) {
      ir::Value* ds = g.add_input("ds", {DType::F32, {2, 4, 4}});
      ir::Value* q = g.add_input("q", {DType::F32, {2, 4, 3}});
      ir::Value* s = op(g, OpKind::Mul, {ds, scalar(g, DType::F32, k)});
      g.add_output(op(g, OpKind::MatMul, {s, q}, {}, "dk"));
      g.add_output(op(g, OpKind::MatMul, {q, s}, flags(true, false), "dq"));
      if (other_reader) g.add_output(op(g, OpKind::Relu, {s}, {}, "r"));
    };
  };
  check(build(0.125, false), {.operand_scales = 1});
  check(build(0.3, false), {});
  check(build(0.125, true), {});
  for (DType t : {DType::F16, DType::BF16})
    check(
        [t](ir::Graph& g) {
          ir::Value* ds = g.add_input("ds", {t, {2, 4, 4}});
          ir::Value* q = g.add_input("q", {t, {2, 4, 3}});
          Attrs to_f32, to_half;
          to_f32.set("to", std::string("f32"));
          to_half.set("to", std::string(dtype_name(t)));
          ir::Value* s =
              op(g, OpKind::Mul, {op(g, OpKind::Cast, {ds}, to_f32), scalar(g, DType::F32, 0.125)});
          ir::Value* narrow = op(g, OpKind::Cast, {s}, to_half);
          g.add_output(op(g, OpKind::MatMul, {narrow, q}, {}, "dk"));
          g.add_output(op(g, OpKind::MatMul, {q, narrow}, flags(true, false), "dq"));
        },
        {.half_operand_scales = 1});
}

TEST(EpilogueFusion, MustNotFire) {
  check(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {5, 3}});
        ir::Value* w = g.add_input("w", {DType::F32, {4, 3}});
        // A Transpose with a non-MatMul user stays, and so do its MatMul users.
        ir::Value* wt = op(g, OpKind::Transpose, {w}, perm({1, 0}));
        g.add_output(op(g, OpKind::MatMul, {x, wt}, {}, "y1"));
        g.add_output(op(g, OpKind::Relu, {wt}, {}, "r"));
        // A permutation other than the last-two swap.
        ir::Value* q = g.add_input("q", {DType::F32, {3, 2, 4}});
        ir::Value* w2 = g.add_input("w2", {DType::F32, {4, 6}});
        g.add_output(op(g, OpKind::MatMul, {op(g, OpKind::Transpose, {q}, perm({1, 0, 2})), w2}, {}, "y2"));
        // A Transpose of a result that has another user.
        ir::Value* x4 = g.add_input("x4", {DType::F32, {5, 4}});
        ir::Value* m = op(g, OpKind::MatMul, {x4, w2});
        g.add_output(op(g, OpKind::Transpose, {m}, perm({1, 0}), "mt"));
        g.add_output(m);
        // A bias along another dim ([m, 1]; one of the result's type is a residual).
        ir::Value* col = g.add_input("col", {DType::F32, {5, 1}});
        g.add_output(op(g, OpKind::Add, {op(g, OpKind::MatMul, {x4, w2}), col}, {}, "by_row"));
        // A MatMul result with another user.
        ir::Value* shared = op(g, OpKind::MatMul, {x4, w2});
        ir::Value* b = g.add_input("b", {DType::F32, {6}});
        g.add_output(op(g, OpKind::Add, {shared, b}, {}, "biased"));
        g.add_output(op(g, OpKind::Relu, {shared}, {}, "shared_relu"));
        // 1-D operands.
        ir::Value* v = g.add_input("v", {DType::F32, {4}});
        g.add_output(op(g, OpKind::Add, {op(g, OpKind::MatMul, {v, w2}), b}, {}, "vec_a"));
        ir::Value* v6 = g.add_input("v6", {DType::F32, {6}});
        g.add_output(
            op(g, OpKind::Mul,
               {op(g, OpKind::MatMul, {x4, op(g, OpKind::MatMul, {w2, v6})}), scalar(g, DType::F32, 2.0)}, {},
               "vec_b"));
        // A scale that is not a constant, and a bias across a Cast (mixed precision).
        ir::Value* k = g.add_input("k", {DType::F32, {}});
        g.add_output(op(g, OpKind::Mul, {op(g, OpKind::MatMul, {x4, w2}), k}, {}, "by_input"));
        g.add_output(op(g, OpKind::Add, {bf16_matmul_as_f32(g, x4, w2), b}, {}, "after_cast"));
        // A bias after a bias: the second Add stays.
        ir::Value* once = op(g, OpKind::Add, {op(g, OpKind::MatMul, {x4, w2}), b});
        g.add_output(op(g, OpKind::Add, {once, b}, {}, "twice"));
        // A scale after a bias would scale the bias too.
        ir::Value* biased = op(g, OpKind::Add, {op(g, OpKind::MatMul, {x4, w2}), b});
        g.add_output(op(g, OpKind::Mul, {biased, scalar(g, DType::F32, 0.5)}, {}, "scaled_bias"));
      },
      {.biases = 2});  // only the first Adds of "twice" and "scaled_bias"
}

TEST(EpilogueFusion, ResidualEpilogues) {
  check(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {2, 5, 3}});
        ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
        ir::Value* b = g.add_input("b", {DType::F32, {4}});
        ir::Value* r = g.add_input("r", {DType::F32, {2, 5, 4}});
        // A skip connection after a linear layer: (product + bias) + r, residual first.
        ir::Value* linear = op(g, OpKind::Add, {op(g, OpKind::MatMul, {x, w}), b});
        g.add_output(op(g, OpKind::Add, {r, linear}, {}, "skip"));
        // Scale, residual, Relu.
        ir::Value* s = op(g, OpKind::Mul, {op(g, OpKind::MatMul, {x, w}), scalar(g, DType::F32, 0.5)});
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::Add, {s, r})}, {}, "scaled_relu"));
        // Two gradient contributions summed: the later MatMul takes the earlier one's result,
        // whichever side of the Add it is on.
        ir::Value* dy = g.add_input("dy", {DType::F32, {2, 5, 4}});
        ir::Value* w2 = g.add_input("w2", {DType::F32, {3, 4}});
        ir::Value* d1 = op(g, OpKind::MatMul, {dy, w}, flags(false, true));
        ir::Value* d2 = op(g, OpKind::MatMul, {dy, w2}, flags(false, true));
        g.add_output(op(g, OpKind::Add, {d2, d1}, {}, "dx"));
      },
      {.scales = 1, .biases = 1, .residuals = 3, .activations = 1});
}

TEST(EpilogueFusion, ResidualEpilogueMustNotFire) {
  check(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {5, 3}});
        ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
        ir::Value* b = g.add_input("b", {DType::F32, {4}});
        ir::Value* r = g.add_input("r", {DType::F32, {5, 4}});
        // A bias or a scale after the residual stays (product + r + b would reorder the sum).
        ir::Value* res = op(g, OpKind::Add, {op(g, OpKind::MatMul, {x, w}), r});
        g.add_output(op(g, OpKind::Add, {res, b}, {}, "bias_after"));
        ir::Value* res2 = op(g, OpKind::Add, {op(g, OpKind::MatMul, {x, w}), r});
        g.add_output(op(g, OpKind::Mul, {res2, scalar(g, DType::F32, 2.0)}, {}, "scale_after"));
        // A second residual stays.
        ir::Value* res3 = op(g, OpKind::Add, {op(g, OpKind::MatMul, {x, w}), r});
        g.add_output(op(g, OpKind::Add, {res3, r}, {}, "twice"));
        // An addend computed after the MatMul (not a MatMul itself), and one that broadcasts.
        ir::Value* m = op(g, OpKind::MatMul, {x, w});
        ir::Value* late = op(g, OpKind::Neg, {r});
        g.add_output(op(g, OpKind::Add, {m, late}, {}, "computed_later"));
        ir::Value* rows = g.add_input("rows", {DType::F32, {5, 1}});
        g.add_output(op(g, OpKind::Add, {op(g, OpKind::MatMul, {x, w}), rows}, {}, "broadcast"));
        // The same value on both sides.
        ir::Value* sq = op(g, OpKind::MatMul, {x, w});
        g.add_output(op(g, OpKind::Add, {sq, sq}, {}, "doubled"));
      },
      {.residuals = 3});  // only the first Adds of "bias_after", "scale_after" and "twice"
}

TEST(EpilogueFusion, ConvResidualEpilogues) {
  check(
      [](ir::Graph& g) {
        // A skip connection around a convolution (no normalization between), then a Relu.
        ir::Value* img = g.add_input("img", {DType::F32, {2, 3, 5, 5}});
        ir::Value* k = g.add_input("k", {DType::F32, {3, 3, 3, 3}});
        ir::Value* c = op(g, OpKind::Conv, {img, k}, conv_attrs());
        g.add_output(op(g, OpKind::Relu, {op(g, OpKind::Add, {img, c})}, {}, "block"));
        // A block input's gradient: the skip's plus the conv path's ConvTranspose.
        ir::Value* dy = g.add_input("dy", {DType::F32, {2, 4, 5, 5}});
        ir::Value* k2 = g.add_input("k2", {DType::F32, {4, 3, 3, 3}});
        ir::Value* skip = g.add_input("skip", {DType::F32, {2, 3, 5, 5}});
        Attrs ct = conv_attrs();
        ct.set("output_padding", Shape{0, 0});
        g.add_output(op(g, OpKind::Add, {op(g, OpKind::ConvTranspose, {dy, k2}, ct), skip}, {}, "dx"));
        // Must not fire: a per-channel addend, one computed after the Conv, a shared result.
        ir::Value* per_channel = g.add_input("per_channel", {DType::F32, {1, 3, 1, 1}});
        g.add_output(
            op(g, OpKind::Add, {op(g, OpKind::Conv, {img, k}, conv_attrs()), per_channel}, {}, "bias"));
        ir::Value* c2 = op(g, OpKind::Conv, {img, k}, conv_attrs());
        g.add_output(op(g, OpKind::Add, {c2, op(g, OpKind::Neg, {img})}, {}, "computed_later"));
        ir::Value* c3 = op(g, OpKind::Conv, {img, k}, conv_attrs());
        g.add_output(op(g, OpKind::Add, {c3, img}, {}, "shared"));
        g.add_output(op(g, OpKind::Sigmoid, {c3}, {}, "other_user"));
      },
      {.conv_activations = 1, .conv_residuals = 2});
}

// A training-mode BatchNormalization of x with its three results (y, running mean and var).
std::vector<ir::Value*> batch_norm(ir::Graph& g, ir::Value* x, const std::string& name) {
  const int64_t c = x->type.shape[1];
  std::vector<ir::Value*> in = {x};
  for (const char* what : {"scale", "bias", "mean", "var"})
    in.push_back(g.add_input(name + "_" + what, {DType::F32, {c}}));
  Attrs a;
  a.set("training_mode", int64_t(1));
  a.set("epsilon", 1e-5);
  a.set("momentum", 0.9);
  return g.add_node(OpKind::BatchNormalization, in, a, {name, name + "_rm", name + "_rv"})->outputs;
}

// BatchNormGrad(dy, x, scale) -> dx, dscale, dbias.
std::vector<ir::Value*> batch_norm_grad(ir::Graph& g, ir::Value* dy, ir::Value* x, ir::Value* scale,
                                        const std::string& name) {
  Attrs a;
  a.set("epsilon", 1e-5);
  return g
      .add_node(OpKind::BatchNormGrad, {dy, x, scale}, a, {name + "_dx", name + "_dscale", name + "_dbias"})
      ->outputs;
}

void add_outputs(ir::Graph& g, const std::vector<ir::Value*>& values) {
  for (ir::Value* v : values) g.add_output(v);
}

TEST(EpilogueFusion, BatchNormReluForwardAndBackward) {
  check(
      [](ir::Graph& g) {
        // Forward: Relu(BatchNormalization(x)); backward: BatchNormGrad(ReluGrad(dy, y)). The
        // inputs are random in [-1, 1], so about half of y is masked.
        ir::Value* x = g.add_input("x", {DType::F32, {2, 3, 4, 4}});
        const std::vector<ir::Value*> bn = batch_norm(g, x, "bn");
        ir::Value* y = op(g, OpKind::Relu, {bn[0]}, {}, "y");
        add_outputs(g, {y, bn[1], bn[2]});
        ir::Value* dy = g.add_input("dy", {DType::F32, {2, 3, 4, 4}});
        add_outputs(g,
                    batch_norm_grad(g, op(g, OpKind::ReluGrad, {dy, y}), x, g.find_value("bn_scale"), "bn"));
        // Must not fire: a normalized value with another user, a ReluGrad result with another
        // user, a BatchNormGrad of a plain gradient.
        const std::vector<ir::Value*> bn2 = batch_norm(g, x, "shared");
        add_outputs(g, {op(g, OpKind::Relu, {bn2[0]}), op(g, OpKind::Neg, {bn2[0]})});
        ir::Value* g2 = op(g, OpKind::ReluGrad, {dy, y});
        add_outputs(g, batch_norm_grad(g, g2, x, g.find_value("bn_scale"), "shared_grad"));
        g.add_output(op(g, OpKind::Neg, {g2}));
        add_outputs(g, batch_norm_grad(g, dy, x, g.find_value("bn_scale"), "plain"));
      },
      {.norm_activations = 1, .norm_relu_grads = 1});
}

TEST(EpilogueFusion, ResidualGradientIsDy) {
  // A MatMul or Conv with a folded residual still differentiates: the residual's gradient is dy.
  for (bool conv : {false, true}) {
    ir::Graph g;
    ir::Value* w =
        g.add_parameter("w", Tensor::from_double(DType::F32, std::vector<double>(conv ? 18 : 12, 0.5),
                                                 conv ? Shape{2, 1, 3, 3} : Shape{3, 4}));
    const Shape out = conv ? Shape{1, 2, 4, 4} : Shape{2, 4};
    ir::Value* r = g.add_parameter(
        "r", Tensor::from_double(DType::F32, std::vector<double>(size_t(num_elements(out)), 1.0), out));
    ir::Value* x = g.add_input("x", {DType::F32, conv ? Shape{1, 1, 4, 4} : Shape{2, 3}});
    ir::Value* y = conv ? g.add_node(OpKind::Conv, {x, w, nullptr, r}, conv_attrs(), {"y"})->outputs[0]
                        : g.add_node(OpKind::MatMul, {x, w, nullptr, r}, {}, {"y"})->outputs[0];
    g.add_output(g.add_node(OpKind::ReduceSum, {y})->outputs[0]);
    passes::Autodiff().run(g);
    ir::verify(g);
    const ir::Value* dr = g.find_value("r@grad");
    ASSERT_NE(dr, nullptr) << ir::print_graph(g);
    EXPECT_EQ(dr->type, r->type);
  }
}

TEST(EpilogueFusion, InferenceChecksTheEpilogue) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F32, {2, 3}});
  ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
  ir::Value* ok = g.add_input("ok", {DType::F32, {1, 4}});
  EXPECT_EQ(g.add_node(OpKind::MatMul, {x, w, ok})->outputs[0]->type, (TensorType{DType::F32, {2, 4}}));
  for (TensorType bad :
       {TensorType{DType::F32, {2, 1}}, TensorType{DType::F32, {2, 4}}, TensorType{DType::F32, {3}},
        TensorType{DType::F16, {4}}, TensorType{DType::F32, {1, 1, 4}}}) {
    ir::Value* b = g.add_input(g.unique_value_name("bad"), bad);
    EXPECT_THROW(g.add_node(OpKind::MatMul, {x, w, b}), Error) << bad.str();
  }
  ir::Value* i = g.add_input("i", {DType::I64, {2, 2}});
  Attrs alpha;
  alpha.set("alpha", 2.0);
  EXPECT_THROW(g.add_node(OpKind::MatMul, {i, i}, alpha), Error);
  ir::Value* v = g.add_input("v", {DType::F32, {3}});
  ir::Value* b2 = g.add_input("b2", {DType::F32, {2}});
  EXPECT_THROW(g.add_node(OpKind::MatMul, {x, v, b2}), Error) << "bias with a vector b";
  ir::Value* res = g.add_input("res", {DType::F32, {2, 4}});
  EXPECT_EQ(g.add_node(OpKind::MatMul, {x, w, ok, res})->outputs[0]->type, (TensorType{DType::F32, {2, 4}}));
  EXPECT_EQ(g.add_node(OpKind::MatMul, {x, w, nullptr, res})->outputs[0]->type,
            (TensorType{DType::F32, {2, 4}}));
  for (TensorType bad : {TensorType{DType::F32, {1, 4}}, TensorType{DType::F16, {2, 4}}}) {
    ir::Value* rb = g.add_input(g.unique_value_name("bad_residual"), bad);
    EXPECT_THROW(g.add_node(OpKind::MatMul, {x, w, nullptr, rb}), Error) << bad.str();
  }
  Attrs relu;
  relu.set("activation", std::string("relu"));
  EXPECT_EQ(g.add_node(OpKind::MatMul, {x, w, ok}, relu)->outputs[0]->type, (TensorType{DType::F32, {2, 4}}));
  EXPECT_THROW(g.add_node(OpKind::MatMul, {i, i}, relu), Error) << "integer Relu epilogue";
  Attrs gelu;
  gelu.set("activation", std::string("gelu"));
  EXPECT_THROW(g.add_node(OpKind::MatMul, {x, w}, gelu), Error);
  ir::Value* img = g.add_input("img", {DType::F32, {1, 2, 4, 4}});
  ir::Value* k = g.add_input("k", {DType::F32, {3, 2, 3, 3}});
  Attrs conv_relu = conv_attrs();
  conv_relu.set("activation", std::string("relu"));
  EXPECT_EQ(g.add_node(OpKind::Conv, {img, k}, conv_relu)->outputs[0]->type,
            (TensorType{DType::F32, {1, 3, 4, 4}}));
  Attrs conv_gelu = conv_attrs();
  conv_gelu.set("activation", std::string("gelu"));
  EXPECT_THROW(g.add_node(OpKind::Conv, {img, k}, conv_gelu), Error);
  // BatchNormGrad's folded ReluGrad: the activation and the Relu's result y come together.
  ir::Value* scale = g.add_input("scale", {DType::F32, {2}});
  EXPECT_EQ(g.add_node(OpKind::BatchNormGrad, {img, img, scale, img}, relu, {"", "", ""})->outputs[0]->type,
            img->type);
  EXPECT_THROW(g.add_node(OpKind::BatchNormGrad, {img, img, scale}, relu, {"", "", ""}), Error);
  EXPECT_THROW(g.add_node(OpKind::BatchNormGrad, {img, img, scale, img}, {}, {"", "", ""}), Error);
  EXPECT_THROW(g.add_node(OpKind::BatchNormGrad, {img, img, scale, k}, relu, {"", "", ""}), Error);
  ir::Value* conv_res = g.add_input("conv_res", {DType::F32, {1, 3, 4, 4}});
  EXPECT_EQ(g.add_node(OpKind::Conv, {img, k, nullptr, conv_res}, conv_attrs())->outputs[0]->type,
            conv_res->type);
  EXPECT_THROW(g.add_node(OpKind::Conv, {img, k, nullptr, img}, conv_attrs()), Error)
      << "residual of the input's shape";
}

TEST(EpilogueFusion, FlopsCountTheEpilogue) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F32, {2, 3}});
  ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
  ir::Value* b = g.add_input("b", {DType::F32, {4}});
  Attrs alpha;
  alpha.set("alpha", 0.5);
  EXPECT_EQ(codegen::node_flops(*g.add_node(OpKind::MatMul, {x, w})), 2 * 8 * 3);
  EXPECT_EQ(codegen::node_flops(*g.add_node(OpKind::MatMul, {x, w, b}, alpha)), 2 * 8 * 3 + 8 + 8);
  Attrs relu;
  relu.set("activation", std::string("relu"));
  EXPECT_EQ(codegen::node_flops(*g.add_node(OpKind::MatMul, {x, w, b}, relu)), 2 * 8 * 3 + 8 + 8);
  ir::Value* r = g.add_input("r", {DType::F32, {2, 4}});
  EXPECT_EQ(codegen::node_flops(*g.add_node(OpKind::MatMul, {x, w, b, r}, relu)), 2 * 8 * 3 + 3 * 8);
  ir::Value* img = g.add_input("img", {DType::F32, {1, 2, 4, 4}});
  ir::Value* k = g.add_input("k", {DType::F32, {3, 2, 3, 3}});
  Attrs conv_relu = conv_attrs();
  const int64_t conv = codegen::node_flops(*g.add_node(OpKind::Conv, {img, k}, conv_relu));
  conv_relu.set("activation", std::string("relu"));
  EXPECT_EQ(codegen::node_flops(*g.add_node(OpKind::Conv, {img, k}, conv_relu)), conv + 3 * 16);
  ir::Value* res = g.add_input("res", {DType::F32, {1, 3, 4, 4}});
  EXPECT_EQ(codegen::node_flops(*g.add_node(OpKind::Conv, {img, k, nullptr, res}, conv_relu)),
            conv + 2 * 3 * 16);
}

TEST(EpilogueFusion, GradientRulesRejectAFoldedActivation) {
  Attrs relu;
  relu.set("activation", std::string("relu"));
  Attrs conv_relu = conv_attrs();
  conv_relu.set("activation", std::string("relu"));
  for (bool conv : {false, true}) {
    ir::Graph g;
    ir::Value* w =
        g.add_parameter("w", Tensor::from_double(DType::F32, std::vector<double>(conv ? 18 : 12, 0.5),
                                                 conv ? Shape{1, 2, 3, 3} : Shape{3, 4}));
    ir::Value* x = g.add_input("x", {DType::F32, conv ? Shape{1, 2, 4, 4} : Shape{2, 3}});
    ir::Value* y = conv ? g.add_node(OpKind::Conv, {x, w}, conv_relu, {""}, "fused")->outputs[0]
                        : g.add_node(OpKind::MatMul, {x, w}, relu, {""}, "fused")->outputs[0];
    g.add_output(g.add_node(OpKind::ReduceSum, {y})->outputs[0]);
    try {
      passes::Autodiff().run(g);
      FAIL() << "autodiff differentiated a folded activation";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("activation"), std::string::npos) << e.what();
    }
  }
  ir::Graph g;
  ir::Value* x =
      g.add_parameter("x", Tensor::from_double(DType::F32, std::vector<double>(24, 0.5), {2, 3, 4}));
  std::vector<ir::Value*> bn = batch_norm(g, x, "bn");
  bn[0]->producer->attrs.set("activation", std::string("relu"));
  g.add_output(g.add_node(OpKind::ReduceSum, {bn[0]})->outputs[0]);
  EXPECT_THROW(passes::Autodiff().run(g), Error) << "a folded BatchNormalization Relu";
}

TEST(EpilogueFusion, CudaBindingRecordsFlagsAndEpilogue) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F32, {2, 3}});
  ir::Value* w = g.add_input("w", {DType::F32, {4, 3}});
  ir::Value* b = g.add_input("b", {DType::F32, {4}});
  Attrs attrs = flags(false, true);
  attrs.set("alpha", 0.5);
  g.add_output(g.add_node(OpKind::MatMul, {x, w, b}, attrs, {"y"})->outputs[0]);
  g.add_output(g.add_node(OpKind::MatMul, {x, w}, flags(false, true), {"z"})->outputs[0]);
  ir::Value* r = g.add_input("r", {DType::F32, {2, 4}});
  g.add_output(g.add_node(OpKind::MatMul, {x, w, nullptr, r}, flags(false, true), {"res"})->outputs[0]);
  const plan::Plan p = codegen::lower_to_plan(g);
  std::vector<codegen::cuda::StepBinding> bound;
  for (int i = 0; i < p.stages(0).steps_size(); ++i)
    if (p.stages(0).steps(i).kernel() == "MatMul")
      bound.push_back(codegen::cuda::bind_cuda_step(p, p.stages(0), i));
  ASSERT_EQ(bound.size(), 3u);
  for (const codegen::cuda::StepBinding& s : bound) {
    EXPECT_EQ(s.kind, codegen::cuda::StepBinding::Kind::Library);
    EXPECT_EQ(s.call, "cublasLt.matmul");
    EXPECT_EQ(s.params.i("transpose_a"), 0);
    EXPECT_EQ(s.params.i("transpose_b"), 1);
  }
  EXPECT_EQ(bound[0].params.s("epilogue"), "bias");
  EXPECT_EQ(bound[0].params.f("alpha"), 0.5);
  EXPECT_EQ(bound[0].params.ints("input2_dims"), (std::vector<int64_t>{4}));
  EXPECT_EQ(bound[0].params.f("beta"), 0.0);
  EXPECT_EQ(bound[1].params.s("epilogue"), "default");
  EXPECT_EQ(bound[1].params.f("alpha"), 1.0);
  // The residual is cuBLASLt's matrix C with beta 1.
  EXPECT_EQ(bound[2].params.s("epilogue"), "default");
  EXPECT_EQ(bound[2].params.f("beta"), 1.0);
  EXPECT_EQ(bound[2].params.ints("input3_dims"), (std::vector<int64_t>{2, 4}));
}

TEST(EpilogueFusion, CudaBindingRecordsReluConvAndNormEpilogues) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F32, {2, 3}});
  ir::Value* w = g.add_input("w", {DType::F32, {3, 4}});
  ir::Value* b = g.add_input("b", {DType::F32, {4}});
  Attrs relu;
  relu.set("activation", std::string("relu"));
  g.add_output(g.add_node(OpKind::MatMul, {x, w, b}, relu, {"y"})->outputs[0]);
  g.add_output(g.add_node(OpKind::MatMul, {x, w}, relu, {"z"})->outputs[0]);
  ir::Value* img = g.add_input("img", {DType::F32, {1, 2, 4, 4}});
  ir::Value* k = g.add_input("k", {DType::F32, {3, 2, 3, 3}});
  Attrs conv_relu = conv_attrs();
  conv_relu.set("activation", std::string("relu"));
  g.add_output(g.add_node(OpKind::Conv, {img, k}, conv_relu, {"c"})->outputs[0]);
  g.add_output(g.add_node(OpKind::Conv, {img, k}, conv_attrs(), {"d"})->outputs[0]);
  ir::Value* res = g.add_input("res", {DType::F32, {1, 3, 4, 4}});
  g.add_output(g.add_node(OpKind::Conv, {img, k, nullptr, res}, conv_attrs(), {"e"})->outputs[0]);
  ir::Value* dy = g.add_input("dy", {DType::F32, {1, 3, 4, 4}});
  Attrs ct = conv_attrs();
  ct.set("output_padding", Shape{0, 0});
  g.add_output(g.add_node(OpKind::ConvTranspose, {dy, k}, ct, {"dx"})->outputs[0]);
  g.add_output(g.add_node(OpKind::ConvTranspose, {dy, k, nullptr, img}, ct, {"dx_sum"})->outputs[0]);
  Attrs bn = relu;
  bn.set("training_mode", int64_t(1));
  bn.set("running_var_unbiased", int64_t(1));  // as dlc's training graphs (cuDNN computes no other)
  std::vector<ir::Value*> bn_in = {img};
  for (const char* what : {"scale", "bias", "mean", "var"})
    bn_in.push_back(g.add_input(what, {DType::F32, {2}}));
  add_outputs(g, g.add_node(OpKind::BatchNormalization, bn_in, bn, {"bn", "rm", "rv"})->outputs);
  add_outputs(
      g, g.add_node(OpKind::BatchNormGrad, {img, img, bn_in[1], img}, relu, {"bdx", "bds", "bdb"})->outputs);
  const plan::Plan p = codegen::lower_to_plan(g);
  std::vector<codegen::cuda::StepBinding> mm, conv, norm;
  for (int i = 0; i < p.stages(0).steps_size(); ++i) {
    const std::string& kernel = p.stages(0).steps(i).kernel();
    if (kernel == "MatMul") mm.push_back(codegen::cuda::bind_cuda_step(p, p.stages(0), i));
    if (kernel == "Conv" || kernel == "ConvTranspose")
      conv.push_back(codegen::cuda::bind_cuda_step(p, p.stages(0), i));
    if (kernel == "BatchNormalization" || kernel == "BatchNormGrad")
      norm.push_back(codegen::cuda::bind_cuda_step(p, p.stages(0), i));
  }
  ASSERT_EQ(mm.size(), 2u);
  EXPECT_EQ(mm[0].params.s("epilogue"), "bias_relu");
  EXPECT_EQ(mm[1].params.s("epilogue"), "relu");
  ASSERT_EQ(conv.size(), 5u);
  ASSERT_EQ(norm.size(), 2u);
  EXPECT_EQ(norm[0].call, "cudnn.batch_norm_forward_training");
  EXPECT_EQ(norm[0].params.s("ops"), "bn_activation");
  EXPECT_EQ(norm[1].call, "cudnn.batch_norm_backward");
  EXPECT_EQ(norm[1].params.s("ops"), "bn_activation");
  EXPECT_EQ(conv[0].call, "cudnn.convolution_forward");
  EXPECT_EQ(conv[0].params.s("activation"), "relu");
  EXPECT_EQ(conv[1].params.s("activation"), "none");
  // A residual is cuDNN's z operand (alpha2 = 1) or, for a transposed convolution, beta = 1.
  EXPECT_EQ(conv[1].params.f("alpha2"), 0.0);
  EXPECT_EQ(conv[2].params.f("alpha2"), 1.0);
  EXPECT_EQ(conv[3].call, "cudnn.convolution_backward_data");
  EXPECT_EQ(conv[3].params.f("beta"), 0.0);
  EXPECT_EQ(conv[4].params.f("beta"), 1.0);
}

}  // namespace
}  // namespace dlc
