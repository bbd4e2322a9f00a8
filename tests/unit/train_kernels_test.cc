// CPU kernels of the training ops (runtime/cpu/kernels/train.def) against naive reference loops:
// MaxPoolGrad on its branch-free 2-D path and on the general window walk,
// BatchNormGrad's one-pass sums, ReluGrad's select.
#include <gtest/gtest.h>

#include <omp.h>
#include <cmath>

#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

using test::kernel_context;
using test::random_values;
using test::view;

// MaxPoolGrad by definition: every output's dy goes to the first valid tap (row-major window
// order) with the window's largest x, or to its last NaN (torch's max_pool picks it).
std::vector<float> max_pool_grad_reference(const std::vector<float>& x, const std::vector<float>& dy,
                                           const Shape& xs, const Shape& ys, const Shape& k, const Shape& s,
                                           const Shape& pads, const Shape& dil) {
  const size_t sp = xs.size() - 2;
  const Shape in(xs.begin() + 2, xs.end()), out(ys.begin() + 2, ys.end());
  const int64_t in_size = num_elements(in), out_size = num_elements(out), win = num_elements(k);
  std::vector<float> dx(x.size(), 0.f);
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p)
    for (int64_t oi = 0; oi < out_size; ++oi) {
      int64_t best = -1;
      for (int64_t wi = 0; wi < win; ++wi) {
        int64_t idx = 0, o_rest = oi, w_rest = wi, o_div = out_size, w_div = win;
        bool inside = true;
        for (size_t d = 0; d < sp; ++d) {
          o_div /= out[d], w_div /= k[d];
          const int64_t o = o_rest / o_div, w = w_rest / w_div;
          o_rest %= o_div, w_rest %= w_div;
          const int64_t pos = o * s[d] - pads[d] + w * dil[d];
          inside = inside && pos >= 0 && pos < in[d];
          idx = idx * in[d] + pos;
        }
        if (!inside) continue;
        const float v = x[size_t(p * in_size + idx)];
        if (best < 0 || std::isnan(v) || v > x[size_t(p * in_size + best)]) best = idx;
      }
      if (best >= 0) dx[size_t(p * in_size + best)] += dy[size_t(p * out_size + oi)];
    }
  return dx;
}

void check_max_pool_grad(const Shape& xs, const Shape& k, const Shape& s, const Shape& pads, const Shape& dil,
                         bool ties) {
  const size_t sp = xs.size() - 2;
  Shape ys = {xs[0], xs[1]};
  for (size_t d = 0; d < sp; ++d)
    ys.push_back((xs[d + 2] + pads[d] + pads[d + sp] - (k[d] - 1) * dil[d] - 1) / s[d] + 1);
  std::vector<float> x = random_values(num_elements(xs), 1), dy = random_values(num_elements(ys), 2);
  if (ties)
    for (float& v : x) v = std::round(v);  // -1, 0, 1: ties in most windows
  // NaNs: a first tap, and taps inside windows (NaN is the maximum; two close ones share windows).
  for (size_t i : {size_t(0), x.size() / 3, x.size() / 3 + 1, x.size() / 2 + 5}) x[i] = std::nanf("");
  std::vector<float> dx(x.size(), 7.f);
  Attrs a;
  a.set("kernel_shape", k);
  a.set("strides", s);
  a.set("pads", pads);
  a.set("dilations", dil);
  KernelContext ctx = kernel_context(a, {view(dy, ys), view(x, xs)}, {view(dx, xs)}, "MaxPoolGrad");
  kernel_MaxPoolGrad(ctx);
  const std::vector<float> want = max_pool_grad_reference(x, dy, xs, ys, k, s, pads, dil);
  for (size_t i = 0; i < dx.size(); ++i) ASSERT_FLOAT_EQ(dx[i], want[i]) << "at " << i;
}

TEST(TrainKernels, MaxPoolGradDenseWindows) {
  for (bool ties : {false, true}) {
    check_max_pool_grad({3, 4, 16, 16}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, ties);  // 2x2/2
    check_max_pool_grad({2, 3, 9, 7}, {3, 2}, {1, 2}, {0, 0, 0, 0}, {1, 1}, ties);    // overlapping rows
    check_max_pool_grad({2, 3, 11}, {3}, {2}, {0, 0}, {1}, ties);                     // 1-D
    check_max_pool_grad({2, 3, 12}, {3}, {3}, {0, 0}, {1}, ties);                     // 1-D, tiling
    check_max_pool_grad({2, 3, 15, 16}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, ties);  // a row left over
  }
}

TEST(TrainKernels, MaxPoolGradPaddedDilatedAnd3d) {
  for (bool ties : {false, true}) {
    check_max_pool_grad({2, 3, 7, 6}, {3, 3}, {2, 2}, {1, 1, 1, 0}, {1, 1}, ties);
    check_max_pool_grad({2, 2, 9, 8}, {2, 3}, {1, 2}, {0, 1, 0, 1}, {2, 1}, ties);
    check_max_pool_grad({1, 2, 5, 4, 6}, {2, 2, 3}, {2, 1, 2}, {1, 0, 1, 0, 1, 1}, {1, 1, 1}, ties);
  }
}

// BatchNormGrad against the textbook two-pass formulas in double, on values far from zero (the
// one-pass sums are shifted) and on both sides of the parallel threshold.
TEST(TrainKernels, BatchNormGradMatchesTwoPassReference) {
  for (const Shape& xs : {Shape{4, 3, 5, 5}, Shape{16, 8, 16, 16}}) {
    const int64_t N = xs[0], C = xs[1], S = xs[2] * xs[3];
    std::vector<float> x = random_values(num_elements(xs), 3), dy = random_values(num_elements(xs), 4);
    for (float& v : x) v = 50.f + 2.f * v;
    std::vector<float> scale = {0.5f, -1.5f, 2.f, 1.f, 0.25f, 3.f, -0.75f, 1.25f};
    scale.resize(size_t(C));
    std::vector<float> dx(x.size()), dscale(static_cast<size_t>(C)), dbias(static_cast<size_t>(C));
    Attrs a;
    a.set("epsilon", 1e-5);
    KernelContext ctx = kernel_context(a, {view(dy, xs), view(x, xs), view(scale, {C})},
                                       {view(dx, xs), view(dscale, {C}), view(dbias, {C})}, "BatchNormGrad");
    kernel_BatchNormGrad(ctx);
    for (int64_t c = 0; c < C; ++c) {
      auto at = [&](int64_t n, int64_t i) { return size_t((n * C + c) * S + i); };
      const double m = double(N * S);
      double mean = 0, var = 0, sdy = 0, sdy_xhat = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) mean += x[at(n, i)] / m;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) var += (x[at(n, i)] - mean) * (x[at(n, i)] - mean) / m;
      const double invstd = 1 / std::sqrt(var + 1e-5);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) {
          sdy += dy[at(n, i)];
          sdy_xhat += dy[at(n, i)] * (x[at(n, i)] - mean) * invstd;
        }
      EXPECT_NEAR(dbias[size_t(c)], sdy, 1e-5 * (1 + std::abs(sdy)));
      EXPECT_NEAR(dscale[size_t(c)], sdy_xhat, 1e-5 * (1 + std::abs(sdy_xhat)));
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < S; ++i) {
          const double xhat = (x[at(n, i)] - mean) * invstd;
          const double want = scale[size_t(c)] * invstd / m * (m * dy[at(n, i)] - sdy - xhat * sdy_xhat);
          ASSERT_NEAR(dx[at(n, i)], want, 1e-5 * (1 + std::abs(want)))
              << "c " << c << " n " << n << " i " << i;
        }
    }
  }
}

// ReluGrad passes dy where y > 0 and writes 0 elsewhere (y = 0, negative, NaN), with one thread
// and with two (chunks above the parallel threshold).
TEST(TrainKernels, ReluGradSelectsWherePositive) {
  const int64_t n = 70001;
  std::vector<float> y = random_values(n, 5), dy = random_values(n, 6), dx(size_t(n), 9.f);
  y[0] = 0.f;
  y[1] = std::nanf("");
  const Attrs none;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    KernelContext ctx = kernel_context(none, {view(dy, {n}), view(y, {n})}, {view(dx, {n})}, "ReluGrad");
    kernel_ReluGrad(ctx);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(dx[size_t(i)], y[size_t(i)] > 0.f ? dy[size_t(i)] : 0.f) << i;
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace dlc::cpu
