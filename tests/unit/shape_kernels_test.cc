// CPU kernels of the shape family against expectations computed independently (index arithmetic
// or written out by hand): transpose, negative-step slice, reflect padding, tile, gather.
#include <gtest/gtest.h>

#include <numeric>

#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

// Runs `kernel` on f32 inputs with the output shape given; returns the output values.
std::vector<float> run(KernelFn kernel, const Attrs& attrs, std::vector<float> in, const Shape& in_dims,
                       const Shape& out_dims) {
  std::vector<float> out(size_t(num_elements(out_dims)), -999.0f);
  KernelContext ctx =
      test::kernel_context(attrs, {test::view(in, in_dims)}, {test::view(out, out_dims)}, "shape");
  kernel(ctx);
  return out;
}

std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(ShapeKernels, Transpose4D) {
  const Shape dims = {2, 3, 4, 5}, perm = {2, 0, 3, 1}, out_dims = {4, 2, 5, 3};
  Attrs a;
  a.set("perm", perm);
  std::vector<float> got = run(kernel_Transpose, a, iota(120), dims, out_dims);
  // out[i][j][k][l] = in[j][l][i][k]
  size_t p = 0;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 5; ++k)
        for (int64_t l = 0; l < 3; ++l) EXPECT_EQ(got[p++], float(((j * 3 + l) * 4 + i) * 5 + k));
}

TEST(ShapeKernels, TransposeLargeKeepsInnerRuns) {
  const Shape dims = {64, 48, 32}, out_dims = {48, 64, 32};
  Attrs a;
  a.set("perm", Shape{1, 0, 2});
  std::vector<float> got = run(kernel_Transpose, a, iota(64 * 48 * 32), dims, out_dims);
  for (int64_t i = 0; i < 48; ++i)
    for (int64_t j = 0; j < 64; ++j)
      for (int64_t k = 0; k < 32; ++k) ASSERT_EQ(got[(i * 64 + j) * 32 + k], float((j * 48 + i) * 32 + k));
}

TEST(ShapeKernels, SliceNegativeSteps) {
  // in[r][c] = 10r + c over [5, 6]; rows 4:0:-3 -> {4, 1}; cols 5:-1(clamped):-2 -> {5, 3, 1}.
  std::vector<float> in;
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 6; ++c) in.push_back(float(10 * r + c));
  Attrs a;
  a.set("starts", Shape{4, 5});
  a.set("ends", Shape{0, -1});
  a.set("axes", Shape{0, 1});
  a.set("steps", Shape{-3, -2});
  EXPECT_EQ(run(kernel_Slice, a, in, {5, 6}, {2, 3}), (std::vector<float>{45, 43, 41, 15, 13, 11}));
}

TEST(ShapeKernels, ReflectPad) {
  Attrs a;
  a.set("mode", std::string("reflect"));
  a.set("pads", Shape{2, 2});
  EXPECT_EQ(run(kernel_Pad, a, {1, 2, 3}, {3}, {7}), (std::vector<float>{3, 2, 1, 2, 3, 2, 1}));
  // numpy.pad([[1, 2], [3, 4]], 1, "reflect")
  a.set("pads", Shape{1, 1, 1, 1});
  EXPECT_EQ(run(kernel_Pad, a, {1, 2, 3, 4}, {2, 2}, {4, 4}),
            (std::vector<float>{4, 3, 4, 3, 2, 1, 2, 1, 4, 3, 4, 3, 2, 1, 2, 1}));
}

TEST(ShapeKernels, ConstantPadWithCrop) {
  Attrs a;
  a.set("pads", Shape{0, 1, 0, -1});
  a.set("value", 7.0);
  EXPECT_EQ(run(kernel_Pad, a, {1, 2, 3, 4}, {2, 2}, {2, 2}), (std::vector<float>{7, 1, 7, 3}));
}

TEST(ShapeKernels, Tile) {
  Attrs a;
  a.set("repeats", Shape{2, 2});
  EXPECT_EQ(run(kernel_Tile, a, {1, 2}, {1, 2}, {2, 4}), (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
}

TEST(ShapeKernels, GatherNegativeIndex) {
  std::vector<float> data = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> idx = {-1, 0};
  std::vector<float> out(4);
  Attrs a;
  a.set("axis", int64_t(1));
  KernelContext ctx =
      test::kernel_context(a, {test::view(data, {2, 3}), test::view(DType::I64, {2}, idx.data())},
                           {test::view(out, {2, 2})}, "Gather");
  kernel_Gather(ctx);
  EXPECT_EQ(out, (std::vector<float>{3, 1, 6, 4}));
  idx[0] = 3;
  EXPECT_THROW(kernel_Gather(ctx), Error);
}

}  // namespace
}  // namespace dlc::cpu
