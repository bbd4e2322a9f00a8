// CPU kernels of the reduction family against independently computed values: softmax rows and
// its gradient, middle-axis and strided reductions, stable LogSumExp, ArgMax ties, CumSum and a long sum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

// Runs kernel `fn` on one f32 input of shape `dims`; the output has `out_dims` and type `out`.
template <typename Out = float>
std::vector<Out> run(KernelFn fn, const Attrs& attrs, std::vector<float> x, const Shape& dims,
                     const Shape& out_dims, DType out = DType::F32) {
  std::vector<Out> y(size_t(num_elements(out_dims)), Out(-7));
  KernelContext ctx = test::kernel_context(attrs, {test::view(DType::F32, dims, x.data())},
                                           {test::view(out, out_dims, y.data())}, "reduction");
  fn(ctx);
  return y;
}

std::vector<float> wave(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(float(i) * 1.7f) * scale;
  return v;
}

TEST(ReductionKernels, SoftmaxLastAxisRowsSumToOneAndMatchHandComputation) {
  Attrs attrs;
  attrs.set("axis", int64_t(-1));
  const std::vector<float> x = wave(2 * 3 * 5, 4.0f);
  const auto y = run(kernel_Softmax, attrs, x, {2, 3, 5}, {2, 3, 5});
  for (int r = 0; r < 6; ++r) {
    double denom = 0, sum = 0;
    for (int j = 0; j < 5; ++j) denom += std::exp(double(x[r * 5 + j]));
    for (int j = 0; j < 5; ++j) {
      EXPECT_NEAR(y[r * 5 + j], std::exp(double(x[r * 5 + j])) / denom, 1e-6);
      sum += y[r * 5 + j];
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

TEST(ReductionKernels, SoftmaxAndLogSoftmaxOverMiddleAxisAreStableForLargeInputs) {
  Attrs attrs;
  attrs.set("axis", int64_t(1));
  std::vector<float> x = wave(2 * 4 * 3, 3.0f);
  for (auto& v : x) v += 10000.0f;  // exp would overflow without the max shift
  const auto y = run(kernel_Softmax, attrs, x, {2, 4, 3}, {2, 4, 3});
  const auto ly = run(kernel_LogSoftmax, attrs, x, {2, 4, 3}, {2, 4, 3});
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i) {
      double denom = 0;
      for (int j = 0; j < 4; ++j) denom += std::exp(double(x[o * 12 + j * 3 + i]) - 10000.0);
      for (int j = 0; j < 4; ++j) {
        const int e = o * 12 + j * 3 + i;
        const double want = std::exp(double(x[e]) - 10000.0) / denom;
        EXPECT_NEAR(y[e], want, 1e-6);
        EXPECT_NEAR(ly[e], std::log(want), 1e-4);
      }
    }
}

// The last axis runs a row at a time, any other axis in blocks of columns: the same sums in the
// same order, so the same bits for the same rows.
TEST(ReductionKernels, SoftmaxRowsOfTheLastAxisEqualTheBlockedPathBitForBit) {
  const int64_t outer = 3, R = 7, inner = 5;
  const std::vector<float> x = wave(outer * R * inner, 6.0f);
  std::vector<float> rows(x.size());  // [outer, inner, R]: each column of x made a row
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < R; ++j)
      for (int64_t i = 0; i < inner; ++i)
        rows[size_t((o * inner + i) * R + j)] = x[size_t((o * R + j) * inner + i)];
  Attrs middle, last;
  middle.set("axis", int64_t(1));
  last.set("axis", int64_t(-1));
  for (KernelFn fn : {kernel_Softmax, kernel_LogSoftmax}) {
    const auto blocked = run(fn, middle, x, {outer, R, inner}, {outer, R, inner});
    const auto by_row = run(fn, last, rows, {outer, inner, R}, {outer, inner, R});
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < R; ++j)
        for (int64_t i = 0; i < inner; ++i)
          ASSERT_EQ(by_row[size_t((o * inner + i) * R + j)], blocked[size_t((o * R + j) * inner + i)])
              << "o " << o << " j " << j << " i " << i;
  }
}

// SoftmaxGrad, dx = y * (dy - sum dy * y) along the axis: a row at a time on the last axis and in
// blocks on a middle one, the same bits for the same rows, and within rounding of a double
// reference.
TEST(ReductionKernels, SoftmaxGradRowsEqualTheBlockedPathAndTheReference) {
  const int64_t outer = 3, R = 19, inner = 5;
  std::vector<float> dy = wave(outer * R * inner, 2.0f), y = wave(outer * R * inner + 3, 1.0f);
  y.erase(y.begin(), y.begin() + 3);
  // [outer, inner, R]: each column of a tensor made a row.
  const auto as_rows = [&](const std::vector<float>& v) {
    std::vector<float> rows(v.size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < R; ++j)
        for (int64_t i = 0; i < inner; ++i)
          rows[size_t((o * inner + i) * R + j)] = v[size_t((o * R + j) * inner + i)];
    return rows;
  };
  std::vector<float> dy_rows = as_rows(dy), y_rows = as_rows(y);
  std::vector<float> blocked(dy.size()), by_row(dy.size());
  Attrs middle, last;
  middle.set("axis", int64_t(1));
  last.set("axis", int64_t(-1));
  KernelContext blocked_ctx =
      test::kernel_context(middle, {test::view(dy, {outer, R, inner}), test::view(y, {outer, R, inner})},
                           {test::view(blocked, {outer, R, inner})}, "SoftmaxGrad");
  kernel_SoftmaxGrad(blocked_ctx);
  KernelContext row_ctx = test::kernel_context(
      last, {test::view(dy_rows, {outer, inner, R}), test::view(y_rows, {outer, inner, R})},
      {test::view(by_row, {outer, inner, R})}, "SoftmaxGrad");
  kernel_SoftmaxGrad(row_ctx);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t j = 0; j < R; ++j) {
        const size_t e = size_t((o * R + j) * inner + i);
        s += double(dy[e]) * double(y[e]);
      }
      for (int64_t j = 0; j < R; ++j) {
        const size_t e = size_t((o * R + j) * inner + i);
        ASSERT_EQ(by_row[size_t((o * inner + i) * R + j)], blocked[e])
            << "o " << o << " j " << j << " i " << i;
        EXPECT_NEAR(blocked[e], double(y[e]) * (double(dy[e]) - s), 1e-6) << e;
      }
    }
}

TEST(ReductionKernels, SumOverMiddleAxisAndOverNonAdjacentAxes) {
  const std::vector<float> x = [] {
    std::vector<float> v(24);
    std::iota(v.begin(), v.end(), 0.0f);
    return v;
  }();
  Attrs middle;
  middle.set("axes", std::vector<int64_t>{1});
  middle.set("keepdims", int64_t(0));
  // x[a][b][c] = 12a + 4b + c; summing over b gives 36a + 12 + 3c.
  const auto y = run(kernel_ReduceSum, middle, x, {2, 3, 4}, {2, 4});
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c) EXPECT_FLOAT_EQ(y[a * 4 + c], float(36 * a + 12 + 3 * c));

  Attrs outer_inner;
  outer_inner.set("axes", std::vector<int64_t>{0, 2});
  outer_inner.set("keepdims", int64_t(1));
  // Mean over a and c: (12*0.5 + 4b + 1.5).
  const auto m = run(kernel_ReduceMean, outer_inner, x, {2, 3, 4}, {1, 3, 1});
  for (int b = 0; b < 3; ++b) EXPECT_FLOAT_EQ(m[b], 6.0f + 4.0f * float(b) + 1.5f);
}

// Scattered axes ending at the last one (a channel sum over [0, 2, 3]) reduce contiguous runs:
// runs shorter and longer than a fold block and not a multiple of its lanes, serial, parallel
// and split (one output of 40000 elements), against a scalar walk in double. Max is exact and
// takes a NaN inside a run.
TEST(ReductionKernels, ScatteredAxesEndingAtTheLastAxisReduceTheirRuns) {
  struct Case {
    Shape dims;
    std::vector<int64_t> axes;
  };
  for (const Case& c :
       {Case{{3, 5, 4, 7}, {0, 2, 3}}, Case{{2, 3, 150}, {0, 2}}, Case{{5, 2, 3, 1, 13}, {0, 2, 3, 4}},
        Case{{2, 1, 200, 100}, {0, 2, 3}}, Case{{4, 6, 2, 9}, {1, 3}}}) {
    const int64_t n = num_elements(c.dims);
    std::vector<float> x = wave(n, 3.0f);
    // Output index and reduced position of every element.
    std::vector<int64_t> out_of(static_cast<size_t>(n));
    int64_t outputs = 1;
    for (size_t d = 0; d < c.dims.size(); ++d)
      if (std::find(c.axes.begin(), c.axes.end(), int64_t(d)) == c.axes.end()) outputs *= c.dims[d];
    for (int64_t e = 0; e < n; ++e) {
      int64_t rest = e, k = 0, scale = 1;
      for (size_t d = c.dims.size(); d-- > 0;) {
        const int64_t i = rest % c.dims[d];
        rest /= c.dims[d];
        if (std::find(c.axes.begin(), c.axes.end(), int64_t(d)) == c.axes.end()) {
          k += i * scale;
          scale *= c.dims[d];
        }
      }
      out_of[size_t(e)] = k;
    }
    x[size_t(n / 2)] = std::numeric_limits<float>::quiet_NaN();
    std::vector<double> sum(size_t(outputs), 0.0);
    std::vector<float> max(size_t(outputs), -std::numeric_limits<float>::infinity());
    for (int64_t e = 0; e < n; ++e) {
      const size_t k = size_t(out_of[size_t(e)]);
      sum[k] += double(x[size_t(e)]);
      if (std::isnan(x[size_t(e)]) || x[size_t(e)] > max[k]) max[k] = x[size_t(e)];
    }
    Attrs attrs;
    attrs.set("axes", c.axes);
    attrs.set("keepdims", int64_t(0));
    const auto got_sum = run(kernel_ReduceSum, attrs, x, c.dims, {outputs});
    const auto got_max = run(kernel_ReduceMax, attrs, x, c.dims, {outputs});
    for (int64_t k = 0; k < outputs; ++k) {
      const size_t i = size_t(k);
      if (std::isnan(max[i])) {
        EXPECT_TRUE(std::isnan(got_sum[i])) << shape_str(c.dims) << " output " << k;
        EXPECT_TRUE(std::isnan(got_max[i])) << shape_str(c.dims) << " output " << k;
        continue;
      }
      EXPECT_NEAR(got_sum[i], sum[i], 1e-5 * (1.0 + std::abs(sum[i])))
          << shape_str(c.dims) << " output " << k;
      EXPECT_EQ(got_max[i], max[i]) << shape_str(c.dims) << " output " << k;
    }
  }
}

TEST(ReductionKernels, LogSumExpSubtractsTheMax) {
  Attrs attrs;
  attrs.set("axes", std::vector<int64_t>{});
  const auto y = run(kernel_ReduceLogSumExp, attrs, {1000.0f, 1000.0f}, {2}, {1});
  EXPECT_NEAR(y[0], 1000.0 + std::log(2.0), 1e-3);
}

TEST(ReductionKernels, LongSumIsSplitAcrossThreadsAndExact) {
  const int64_t n = 1 << 20;
  std::vector<float> x(size_t(n), 0.1f);
  x[0] = 3.0f;
  Attrs attrs;
  attrs.set("keepdims", int64_t(0));
  const auto y = run(kernel_ReduceSum, attrs, x, {n}, {});
  EXPECT_NEAR(y[0], 3.0 + double(0.1f) * double(n - 1), 1e-2);
  const auto mx = run(kernel_ReduceMax, attrs, x, {n}, {});
  EXPECT_EQ(mx[0], 3.0f);
}

// TopKIndices over the middle axis of [2, 4, 2]: best first, ties to the lower position, NaN the
// largest value, and the smallest k when largest = 0.
TEST(ReductionKernels, TopKIndicesOrdersTiesAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Line (0, 0): 3 1 3 2; (0, 1): 0 nan 5 5; (1, 0): 4 4 4 4; (1, 1): -1 -2 -3 -4.
  const std::vector<float> x = {3, 0, 1, nan, 3, 5, 2, 5, 4, -1, 4, -2, 4, -3, 4, -4};
  Attrs a;
  a.set("axis", int64_t(1));
  a.set("k", int64_t(3));
  a.set("largest", int64_t(1));
  EXPECT_EQ((run<int64_t>(kernel_TopKIndices, a, x, {2, 4, 2}, {2, 3, 2}, DType::I64)),
            (std::vector<int64_t>{0, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2}));
  a.set("largest", int64_t(0));
  EXPECT_EQ((run<int64_t>(kernel_TopKIndices, a, x, {2, 4, 2}, {2, 3, 2}, DType::I64)),
            (std::vector<int64_t>{1, 0, 3, 2, 0, 3, 0, 3, 1, 2, 2, 1}));
}

TEST(ReductionKernels, ArgMaxHonoursSelectLastIndexAndCumSumExclusiveReverse) {
  Attrs arg;
  arg.set("axis", int64_t(1));
  arg.set("keepdims", int64_t(0));
  const std::vector<float> x = {1, 5, 5, 0, 2, 2};
  EXPECT_EQ((run<int64_t>(kernel_ArgMax, arg, x, {2, 3}, {2}, DType::I64)), (std::vector<int64_t>{1, 1}));
  arg.set("select_last_index", int64_t(1));
  EXPECT_EQ((run<int64_t>(kernel_ArgMax, arg, x, {2, 3}, {2}, DType::I64)), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ((run<int64_t>(kernel_ArgMin, arg, x, {2, 3}, {2}, DType::I64)), (std::vector<int64_t>{0, 0}));

  Attrs cs;
  cs.set("axis", int64_t(1));
  cs.set("exclusive", int64_t(1));
  cs.set("reverse", int64_t(1));
  EXPECT_EQ(run(kernel_CumSum, cs, x, {2, 3}, {2, 3}), (std::vector<float>{10, 5, 0, 4, 2, 0}));
}

}  // namespace
}  // namespace dlc::cpu
