// Elementwise CPU kernels: broadcasting over non-trivial shapes, integer Div/Mod semantics, Cast
// to bool and f16, checked against values computed independently here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dlc/error.h"
#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

template <typename T>
TensorView view(DType dtype, Shape dims, std::vector<T>& data) {
  return test::view(dtype, std::move(dims), data.data());
}

void run(KernelFn kernel, const Attrs& attrs, std::vector<TensorView> ins, std::vector<TensorView> outs) {
  KernelContext ctx = test::kernel_context(attrs, std::move(ins), std::move(outs), "elementwise");
  kernel(ctx);
}

TEST(ElementwiseKernels, AddBroadcastsThreeDimensions) {
  // a: [2,1,4], b: [3,1] -> out: [2,3,4]
  std::vector<float> a(8), b(3), out(24);
  for (int i = 0; i < 8; ++i) a[i] = float(i) * 1.5f;
  for (int i = 0; i < 3; ++i) b[i] = float(100 * (i + 1));
  run(kernel_Add, {}, {view(DType::F32, {2, 1, 4}, a), view(DType::F32, {3, 1}, b)},
      {view(DType::F32, {2, 3, 4}, out)});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(out[(i * 3 + j) * 4 + k], a[i * 4 + k] + b[j]) << i << j << k;
}

TEST(ElementwiseKernels, SubBroadcastsBothOperands) {
  // a: [4,1] (i64), b: [1,5] -> out: [4,5]
  std::vector<int64_t> a = {1, -2, 30, 4}, b = {5, 6, -7, 8, 9}, out(20);
  run(kernel_Sub, {}, {view(DType::I64, {4, 1}, a), view(DType::I64, {1, 5}, b)},
      {view(DType::I64, {4, 5}, out)});
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(out[i * 5 + j], a[i] - b[j]);
}

TEST(ElementwiseKernels, WhereBroadcastsAllThreeInputs) {
  // cond: [3,1], x: [2,1,4], y: scalar -> out: [2,3,4]
  std::vector<uint8_t> cond = {1, 0, 1};
  std::vector<int32_t> x(8), y = {-1}, out(24);
  for (int i = 0; i < 8; ++i) x[i] = i * 10;
  run(kernel_Where, {},
      {view(DType::Bool, {3, 1}, cond), view(DType::I32, {2, 1, 4}, x), view(DType::I32, {}, y)},
      {view(DType::I32, {2, 3, 4}, out)});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(out[(i * 3 + j) * 4 + k], cond[j] ? x[i * 4 + k] : -1);
}

TEST(ElementwiseKernels, IntegerDivTruncatesTowardZero) {
  std::vector<int32_t> a = {7, -7, 7, -7, 0, 9, -9}, b = {2, 2, -2, -2, 3, 3, 4}, out(7);
  run(kernel_Div, {}, {view(DType::I32, {7}, a), view(DType::I32, {7}, b)}, {view(DType::I32, {7}, out)});
  for (int i = 0; i < 7; ++i) EXPECT_EQ(out[i], int32_t(std::trunc(double(a[i]) / double(b[i])))) << i;
}

TEST(ElementwiseKernels, IntegerDivByZeroIsAnError) {
  std::vector<int64_t> a = {1, 2}, b = {1, 0}, out(2);
  EXPECT_THROW(
      run(kernel_Div, {}, {view(DType::I64, {2}, a), view(DType::I64, {2}, b)}, {view(DType::I64, {2}, out)}),
      Error);
}

TEST(ElementwiseKernels, ModFollowsDivisorSignUnlessFmod) {
  std::vector<int64_t> a = {7, -7, 7, -7, 6, -6, 5}, b = {3, 3, -3, -3, 3, -3, 7}, out(7);
  // fmod = 0: the result takes the divisor's sign (a - floor(a / b) * b).
  run(kernel_Mod, {}, {view(DType::I64, {7}, a), view(DType::I64, {7}, b)}, {view(DType::I64, {7}, out)});
  for (int i = 0; i < 7; ++i) {
    const double q = std::floor(double(a[i]) / double(b[i]));
    EXPECT_EQ(out[i], int64_t(double(a[i]) - q * double(b[i]))) << i;
  }
  // fmod = 1: the result takes the dividend's sign.
  Attrs fmod;
  fmod.set("fmod", int64_t(1));
  run(kernel_Mod, fmod, {view(DType::I64, {7}, a), view(DType::I64, {7}, b)}, {view(DType::I64, {7}, out)});
  for (int i = 0; i < 7; ++i) EXPECT_EQ(out[i], int64_t(std::fmod(double(a[i]), double(b[i])))) << i;
}

TEST(ElementwiseKernels, CastToBool) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> in = {0.0f, -0.0f, 0.5f, -2.0f, nan, 1e-30f};
  std::vector<uint8_t> out(6, 7);
  Attrs attrs;
  attrs.set("to", std::string("bool"));
  run(kernel_Cast, attrs, {view(DType::F32, {2, 3}, in)}, {view(DType::Bool, {2, 3}, out)});
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 1, 1, 1, 1}));
}

TEST(ElementwiseKernels, CastToF16AndBack) {
  std::vector<float> in = {1.0f, -2.0f, 0.5f, 65504.0f, 1e5f, 0.0f, 1.0f + 1.0f / 4096};
  // IEEE binary16 bit patterns: sign | 5-bit exponent (bias 15) | 10-bit mantissa.
  const std::vector<uint16_t> want = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x7C00, 0x0000, 0x3C00};
  std::vector<uint16_t> half(in.size());
  Attrs to_f16;
  to_f16.set("to", std::string("f16"));
  const int64_t n = int64_t(in.size());
  run(kernel_Cast, to_f16, {view(DType::F32, {n}, in)}, {view(DType::F16, {n}, half)});
  EXPECT_EQ(half, want);

  std::vector<float> back(in.size());
  Attrs to_f32;
  to_f32.set("to", std::string("f32"));
  run(kernel_Cast, to_f32, {view(DType::F16, {n}, half)}, {view(DType::F32, {n}, back)});
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
  EXPECT_EQ(back[3], 65504.0f);
  EXPECT_TRUE(std::isinf(back[4]));
}

TEST(ElementwiseKernels, CastFloatToIntTruncates) {
  std::vector<double> in = {2.7, -2.7, 300.0};
  std::vector<int32_t> out(3);
  Attrs attrs;
  attrs.set("to", std::string("i32"));
  run(kernel_Cast, attrs, {view(DType::F64, {3}, in)}, {view(DType::I32, {3}, out)});
  EXPECT_EQ(out, (std::vector<int32_t>{2, -2, 300}));
}

TEST(ElementwiseKernels, RoundHalfToEven) {
  std::vector<float> in = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f}, out(6);
  run(kernel_Round, {}, {view(DType::F32, {6}, in)}, {view(DType::F32, {6}, out)});
  EXPECT_EQ(out, (std::vector<float>{0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 2.0f}));
}

// NaN and infinities through the max/min-like ops, as PyTorch computes them (torch.relu,
// leaky_relu, clamp, maximum/minimum, celu, hardsigmoid): a NaN input gives NaN, never 0 or a
// bound; otherwise the ordinary values. Values past the vector width so the SIMD body runs.
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Same value, NaN matching NaN.
void expect_same(const std::vector<float>& got, const std::vector<float>& want, const char* op) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << op << " at " << i << ": " << got[i];
    else
      EXPECT_EQ(got[i], want[i]) << op << " at " << i;
  }
}

// 40 values: NaN, +-inf, +-0 and finite values, repeated.
std::vector<float> special_values() {
  const std::vector<float> base = {kNaN, -kInf, kInf, -0.f, 0.f, -2.5f, 3.f, -1e-30f, 1e30f, -kNaN};
  std::vector<float> v;
  for (int r = 0; r < 4; ++r) v.insert(v.end(), base.begin(), base.end());
  return v;
}

std::vector<float> run_unary(KernelFn kernel, const Attrs& attrs, std::vector<float> in) {
  std::vector<float> out(in.size(), 7.f);
  const int64_t n = int64_t(in.size());
  run(kernel, attrs, {view(DType::F32, {n}, in)}, {view(DType::F32, {n}, out)});
  return out;
}

TEST(ElementwiseKernels, ReluPropagatesNaN) {
  const std::vector<float> x = special_values();
  std::vector<float> want;
  for (float v : x) want.push_back(std::isnan(v) ? v : (v < 0 ? 0.f : v));
  expect_same(run_unary(kernel_Relu, {}, x), want, "Relu");
  // -0 stays -0 as in torch.relu; negatives give +0.
  const std::vector<float> y = run_unary(kernel_Relu, {}, {-0.f, -3.f});
  EXPECT_TRUE(std::signbit(y[0]));
  EXPECT_FALSE(std::signbit(y[1]));
  // f16 storage computes in f32 and keeps the NaN.
  std::vector<uint16_t> h = {0x7E00, 0xBC00, 0x3C00, 0xFC00}, hy(4);  // NaN, -1, 1, -inf
  run(kernel_Relu, {}, {view(DType::F16, {4}, h)}, {view(DType::F16, {4}, hy)});
  EXPECT_EQ((hy[0] & 0x7C00), 0x7C00);
  EXPECT_NE((hy[0] & 0x03FF), 0);
  EXPECT_EQ(hy[1], 0);
  EXPECT_EQ(hy[2], 0x3C00);
  EXPECT_EQ(hy[3], 0);
}

TEST(ElementwiseKernels, LeakyReluCeluHardSigmoidPropagateNaN) {
  const std::vector<float> x = special_values();
  Attrs leaky;
  leaky.set("alpha", 0.5);
  std::vector<float> want_leaky, want_celu, want_hs;
  for (float v : x) {
    want_leaky.push_back(v < 0 ? 0.5f * v : v);
    want_celu.push_back(std::isnan(v) ? v : std::fmax(0.f, v) + std::fmin(0.f, std::expm1(v)));
    want_hs.push_back(std::isnan(v) ? v : std::fmax(0.f, std::fmin(1.f, 0.2f * v + 0.5f)));
  }
  expect_same(run_unary(kernel_LeakyRelu, leaky, x), want_leaky, "LeakyRelu");
  expect_same(run_unary(kernel_Celu, {}, x), want_celu, "Celu");
  expect_same(run_unary(kernel_HardSigmoid, {}, x), want_hs, "HardSigmoid");
}

TEST(ElementwiseKernels, ClipPropagatesNaN) {
  std::vector<float> x = special_values(), lo = {-1.f}, hi = {2.f};
  std::vector<float> out(x.size()), want;
  for (float v : x) want.push_back(std::isnan(v) ? v : std::fmin(2.f, std::fmax(-1.f, v)));
  const int64_t n = int64_t(x.size());
  run(kernel_Clip, {}, {view(DType::F32, {n}, x), view(DType::F32, {}, lo), view(DType::F32, {}, hi)},
      {view(DType::F32, {n}, out)});
  expect_same(out, want, "Clip");
  // A NaN bound makes every result NaN, as torch.clamp(x, min=nan) and numpy.clip do.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const auto& [low, high] : {std::pair{nan, 2.f}, std::pair{-1.f, nan}}) {
    std::vector<float> l = {low}, h = {high};
    run(kernel_Clip, {}, {view(DType::F32, {n}, x), view(DType::F32, {}, l), view(DType::F32, {}, h)},
        {view(DType::F32, {n}, out)});
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_TRUE(std::isnan(out[i])) << "Clip(" << x[i] << ", " << low << ", " << high << ") = " << out[i];
  }
}

TEST(ElementwiseKernels, MaxMinPropagateNaNFromEitherOperand) {
  std::vector<float> a = special_values();
  std::vector<float> b(a.rbegin(), a.rend());  // NaN against NaN, numbers and infinities, both sides
  std::vector<float> mx(a.size()), mn(a.size()), want_mx, want_mn;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool nan = std::isnan(a[i]) || std::isnan(b[i]);
    want_mx.push_back(nan ? kNaN : std::fmax(a[i], b[i]));
    want_mn.push_back(nan ? kNaN : std::fmin(a[i], b[i]));
  }
  const int64_t n = int64_t(a.size());
  run(kernel_Max, {}, {view(DType::F32, {n}, a), view(DType::F32, {n}, b)}, {view(DType::F32, {n}, mx)});
  run(kernel_Min, {}, {view(DType::F32, {n}, a), view(DType::F32, {n}, b)}, {view(DType::F32, {n}, mn)});
  expect_same(mx, want_mx, "Max");
  expect_same(mn, want_mn, "Min");
  // A NaN second operand against a number (the case that used to give the number).
  std::vector<float> one = {1.f}, nan = {kNaN}, y(1);
  run(kernel_Max, {}, {view(DType::F32, {1}, one), view(DType::F32, {1}, nan)}, {view(DType::F32, {1}, y)});
  EXPECT_TRUE(std::isnan(y[0]));
  run(kernel_Min, {}, {view(DType::F32, {1}, one), view(DType::F32, {1}, nan)}, {view(DType::F32, {1}, y)});
  EXPECT_TRUE(std::isnan(y[0]));
}

}  // namespace
}  // namespace dlc::cpu
