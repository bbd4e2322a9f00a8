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

}  // namespace
}  // namespace dlc::cpu
