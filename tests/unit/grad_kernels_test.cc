// CPU kernels of the gradient ops (ir/ops/grad.def), without golden values: the gradients of the
// linear ops are checked as adjoints of their forward kernels (<op(x), dy> = <x, grad(dy)> for
// random x and dy), LayerNormGrad by the identities its result must satisfy.
#include <gtest/gtest.h>

#include <numeric>

#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

using test::kernel_context;
using test::random_values;
using test::view;

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}

// Runs `forward` on x and `backward` on dy and expects <forward(x), dy> = <x, backward(dy)>.
void expect_adjoint(KernelFn forward, KernelFn backward, const Attrs& fwd_attrs, const Attrs& bwd_attrs,
                    const Shape& x_shape, const Shape& y_shape, std::vector<TensorView> extra_inputs = {}) {
  std::vector<float> x = random_values(num_elements(x_shape), 1), y(size_t(num_elements(y_shape)));
  std::vector<float> dy = random_values(num_elements(y_shape), 2), dx(x.size());
  std::vector<TensorView> fwd_in = {view(x, x_shape)}, bwd_in = {view(dy, y_shape)};
  fwd_in.insert(fwd_in.end(), extra_inputs.begin(), extra_inputs.end());
  bwd_in.insert(bwd_in.end(), extra_inputs.begin(), extra_inputs.end());
  KernelContext f = kernel_context(fwd_attrs, fwd_in, {view(y, y_shape)}, "forward");
  forward(f);
  KernelContext b = kernel_context(bwd_attrs, bwd_in, {view(dx, x_shape)}, "backward");
  backward(b);
  EXPECT_NEAR(dot(y, dy), dot(x, dx), 1e-4 * (1 + std::abs(dot(y, dy))));
}

TEST(GradKernels, GatherGradSumsDuplicateIndices) {
  std::vector<float> dy = {1, 2, 3, 4};
  std::vector<int64_t> idx = {1, 3, 1, -3};
  std::vector<float> dx(4, -1.f);
  Attrs a;
  a.set("axis", int64_t(0));
  a.set("shape", Shape{4});
  KernelContext ctx = kernel_context(a, {view(dy, {4}), view(DType::I64, {4}, idx.data())}, {view(dx, {4})});
  kernel_GatherGrad(ctx);
  EXPECT_EQ(dx, (std::vector<float>{0, 8, 0, 2}));
}

TEST(GradKernels, GatherGradIsTheAdjointOfGather) {
  std::vector<int64_t> idx = {2, 0, 2, 4, 1, 2};
  for (int64_t axis : {0, 1, 2}) {  // the last axis: the kernel's one-element-slice path
    const Shape data = {5, 5, 3 + 2 * (axis == 2)};
    Shape out = data;
    out.erase(out.begin() + axis);
    out.insert(out.begin() + axis, {2, 3});
    Attrs fwd, bwd;
    fwd.set("axis", axis);
    bwd.set("axis", axis);
    bwd.set("shape", data);
    expect_adjoint(kernel_Gather, kernel_GatherGrad, fwd, bwd, data, out,
                   {view(DType::I64, {2, 3}, idx.data())});
  }
}

TEST(GradKernels, SliceGradIsTheAdjointOfSlice) {
  Attrs fwd;
  fwd.set("starts", Shape{4, 1});
  fwd.set("ends", Shape{-1, 6});
  fwd.set("axes", Shape{0, 2});
  fwd.set("steps", Shape{-2, 2});
  Attrs bwd = fwd;
  bwd.set("shape", Shape{5, 2, 6});
  expect_adjoint(kernel_Slice, kernel_SliceGrad, fwd, bwd, {5, 2, 6}, {3, 2, 3});
}

TEST(GradKernels, AveragePoolGradIsTheAdjointOfAveragePool) {
  for (int64_t include : {0, 1})
    for (int64_t ceil : {0, 1}) {
      Attrs fwd;
      fwd.set("kernel_shape", Shape{3, 2});
      fwd.set("strides", Shape{2, 2});
      fwd.set("pads", Shape{1, 0, 1, 1});
      fwd.set("count_include_pad", include);
      fwd.set("ceil_mode", ceil);
      Attrs bwd = fwd;
      bwd.set("shape", Shape{2, 3, 6, 5});
      // Output rows: (6 + 2 - 3) / 2 + 1 = 3 (ceil 4), columns: (5 + 1 - 2) / 2 + 1 = 3.
      expect_adjoint(kernel_AveragePool, kernel_AveragePoolGrad, fwd, bwd, {2, 3, 6, 5},
                     {2, 3, ceil ? 4 : 3, 3});
    }
}

// LayerNormGrad over rows of 6 with unit scale: each row of dx sums to 0 and is orthogonal to
// xhat (up to eps), dbias is the column sum of dy, and a dy constant along a row gives dx = 0.
TEST(GradKernels, LayerNormGradSatisfiesItsIdentities) {
  const int64_t rows = 4, D = 6;
  std::vector<double> x(size_t(rows * D)), dy(x.size()), scale(size_t(D), 1.0), dx(x.size()),
      ds(static_cast<size_t>(D)), db(static_cast<size_t>(D));
  const std::vector<float> rx = random_values(rows * D, 3), rdy = random_values(rows * D, 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 3.0 + rx[i], dy[i] = rdy[i];
  Attrs a;
  a.set("axis", int64_t(1));
  a.set("epsilon", 0.0);
  auto run = [&] {
    KernelContext ctx =
        kernel_context(a,
                       {view(DType::F64, {rows, D}, dy.data()), view(DType::F64, {rows, D}, x.data()),
                        view(DType::F64, {D}, scale.data())},
                       {view(DType::F64, {rows, D}, dx.data()), view(DType::F64, {D}, ds.data()),
                        view(DType::F64, {D}, db.data())});
    kernel_LayerNormGrad(ctx);
  };
  run();
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0, sum_dx = 0, dx_xhat = 0;
    for (int64_t i = 0; i < D; ++i) mean += x[size_t(r * D + i)] / double(D);
    for (int64_t i = 0; i < D; ++i) var += std::pow(x[size_t(r * D + i)] - mean, 2) / double(D);
    for (int64_t i = 0; i < D; ++i) {
      sum_dx += dx[size_t(r * D + i)];
      dx_xhat += dx[size_t(r * D + i)] * (x[size_t(r * D + i)] - mean) / std::sqrt(var);
    }
    EXPECT_NEAR(sum_dx, 0, 1e-12);
    EXPECT_NEAR(dx_xhat, 0, 1e-12);
  }
  for (int64_t i = 0; i < D; ++i) {
    double col = 0;
    for (int64_t r = 0; r < rows; ++r) col += dy[size_t(r * D + i)];
    EXPECT_NEAR(db[size_t(i)], col, 1e-12);
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < D; ++i) dy[size_t(r * D + i)] = double(r);
  run();
  for (double v : dx) EXPECT_NEAR(v, 0, 1e-12);
}

}  // namespace
}  // namespace dlc::cpu
