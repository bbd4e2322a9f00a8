// NaN and infinities through the fused elementwise programs' CPU interpreter (FusedElementwise):
// Relu, Max, Min and Clip propagate a NaN operand as PyTorch does (torch.relu, torch.maximum/
// minimum, torch.clamp), ReluGrad gives 0 for a NaN y (torch's threshold_backward), and every
// result matches the unfused CPU kernel of the same op. A NaN forward activation must survive
// fusion, or fp16 loss scaling never sees the overflow.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

using test::kernel_context;
using test::view;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Same value (and sign of zero), NaN matching NaN.
void expect_same(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": " << got[i];
    } else {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " at " << i;
    }
  }
}

// Runs the one-output program `body` over inputs x and y (both of x's size).
std::vector<float> run_fused(const std::string& body, std::vector<float>& x, std::vector<float>& y) {
  const int64_t n = int64_t(x.size());
  std::vector<float> out(x.size(), 7.f);
  Attrs attrs;
  attrs.set("program", body);
  KernelContext ctx =
      kernel_context(attrs, {view(x, {n}), view(y, {n})}, {view(out, {n})}, "FusedElementwise");
  find_kernel("FusedElementwise")(ctx);
  return out;
}

// Runs the unfused CPU kernel `op` over `ins` (f32, x's size).
std::vector<float> run_kernel(const std::string& op, std::vector<std::vector<float>*> ins) {
  const int64_t n = int64_t(ins[0]->size());
  std::vector<TensorView> views;
  for (auto* v : ins) views.push_back(view(*v, v->size() == 1 ? Shape{} : Shape{n}));
  std::vector<float> out(ins[0]->size(), 7.f);
  KernelContext ctx = kernel_context({}, views, {view(out, {n})}, op);
  find_kernel(op)(ctx);
  return out;
}

// x and y hold NaN against numbers, infinities and NaN, on both sides, past a vector's width.
struct Operands {
  std::vector<float> x, y;
  Operands() {
    const std::vector<float> a = {kNaN, -kInf, kInf, -0.f, 0.f, -2.5f, 3.f, -1e-30f, 1e30f, kNaN, 1.f, -1.f};
    for (int r = 0; r < 3; ++r) x.insert(x.end(), a.begin(), a.end());
    y.assign(x.rbegin(), x.rend());
    y[1] = kNaN;  // x[1] is -inf
  }
};

TEST(FusedNaN, ReluKeepsNaN) {
  Operands o;
  const std::vector<float> got = run_fused("%0 = input 0; %1 = Relu %0; output %1 f32", o.x, o.y);
  std::vector<float> want;
  for (float v : o.x) want.push_back(std::isnan(v) ? v : (v < 0 ? 0.f : v));  // -0 stays -0 (torch)
  expect_same(got, want, "fused Relu");
  expect_same(got, run_kernel("Relu", {&o.x}), "fused Relu vs kernel");
  EXPECT_TRUE(std::isnan(got[0]));
}

TEST(FusedNaN, MaxMinPropagateEitherOperand) {
  Operands o;
  for (const char* op : {"Max", "Min"}) {
    for (bool swap : {false, true}) {
      const std::string body = std::string("%0 = input 0; %1 = input 1; %2 = ") + op +
                               (swap ? " %1, %0" : " %0, %1") + "; output %2 f32";
      const std::vector<float> got = run_fused(body, o.x, o.y);
      std::vector<float>& a = swap ? o.y : o.x;
      std::vector<float>& b = swap ? o.x : o.y;
      for (size_t i = 0; i < got.size(); ++i)
        if (std::isnan(a[i]) || std::isnan(b[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << body << " at " << i;
        }
      expect_same(got, run_kernel(op, {&a, &b}), body + " vs kernel");
    }
  }
}

TEST(FusedNaN, ClipKeepsNaNAndReluGradZeroesIt) {
  Operands o;
  std::vector<float> lo = {-1.f}, hi = {2.f};
  const std::vector<float> clip = run_fused(
      "%0 = input 0; %1 = constant -1; %2 = constant 2; %3 = Clip %0, %1, %2; output %3 f32", o.x, o.y);
  expect_same(clip, run_kernel("Clip", {&o.x, &lo, &hi}), "fused Clip vs kernel");
  EXPECT_TRUE(std::isnan(clip[0]));
  // Per-element lower bounds (y), some NaN: a NaN x or bound gives NaN.
  const std::vector<float> clip_lo =
      run_fused("%0 = input 0; %1 = input 1; %2 = constant 2; %3 = Clip %0, %1, %2; output %3 f32", o.x, o.y);
  for (size_t i = 0; i < clip_lo.size(); ++i) {
    if (std::isnan(o.x[i]) || std::isnan(o.y[i]))
      EXPECT_TRUE(std::isnan(clip_lo[i])) << i;
    else
      EXPECT_EQ(clip_lo[i], std::fmin(std::fmax(o.x[i], o.y[i]), 2.f)) << i;
  }
  // ReluGrad(dy = x, y): dy where y > 0, else 0 -- also for a NaN y; a NaN dy passes where y > 0.
  const std::vector<float> grad =
      run_fused("%0 = input 0; %1 = input 1; %2 = ReluGrad %0, %1; output %2 f32", o.x, o.y);
  for (size_t i = 0; i < grad.size(); ++i) {
    const float want = o.y[i] > 0 ? o.x[i] : 0.f;
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(grad[i])) << i;
    else
      EXPECT_EQ(grad[i], want) << i;
  }
  EXPECT_EQ(grad[1], 0.f);  // y NaN
}

// An inf - inf activation stays NaN through Add + Relu + Mul in f16 storage (the loss-scaling case).
TEST(FusedNaN, OverflowNaNSurvivesAHalfChain) {
  std::vector<uint16_t> a = {0x7C00, 0x3C00}, b = {0xFC00, 0x3C00}, out(2);  // inf, 1 / -inf, 1
  Attrs attrs;
  attrs.set("program", std::string("%0 = input 0; %1 = input 1; %2 = Add %0, %1; %3 = Relu %2; "
                                   "%4 = constant 2; %5 = Mul %3, %4; output %5 f16"));
  KernelContext ctx =
      kernel_context(attrs, {test::view(DType::F16, {2}, a.data()), test::view(DType::F16, {2}, b.data())},
                     {test::view(DType::F16, {2}, out.data())}, "FusedElementwise");
  find_kernel("FusedElementwise")(ctx);
  EXPECT_EQ(out[0] & 0x7C00, 0x7C00);  // NaN: all-ones exponent, nonzero mantissa
  EXPECT_NE(out[0] & 0x03FF, 0);
  EXPECT_EQ(out[1], 0x4400);  // relu(1 + 1) * 2 = 4
}

}  // namespace
}  // namespace dlc::cpu
