// CPU kernels of the nn family (Conv, ConvGradFilter, MatMul, MaxPool, Attention) against naive
// reference loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::cpu {
namespace {

using test::kernel_context;
using test::random_values;
using test::view;

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-4f + 1e-4f * std::abs(want[i])) << "at " << i;
}

// The window attributes of a 2-D convolution (and of its ConvGradFilter): a KH x KW kernel,
// stride S, pads (top, left, bottom, right), no dilation, G groups.
Attrs conv2d_attrs(int64_t KH, int64_t KW, int64_t S, const Shape& pads, int64_t G) {
  Attrs attrs;
  attrs.set("kernel_shape", Shape{KH, KW});
  attrs.set("strides", Shape{S, S});
  attrs.set("pads", pads);
  attrs.set("dilations", Shape{1, 1});
  attrs.set("group", G);
  return attrs;
}

// Conv of x [N, C, H, W] by M filters of KH x KW in G groups, stride S, pads (top, left, bottom,
// right) against the direct sum in double.
void check_conv2d(int64_t N, int64_t C, int64_t H, int64_t W, int64_t M, int64_t G, int64_t KH, int64_t KW,
                  int64_t S, int64_t pt, int64_t pl, int64_t pb, int64_t pr) {
  const int64_t OH = (H + pt + pb - KH) / S + 1, OW = (W + pl + pr - KW) / S + 1;
  auto x = random_values(N * C * H * W, 1), w = random_values(M * (C / G) * KH * KW, 2),
       b = random_values(M, 3);
  std::vector<float> y(size_t(N * M * OH * OW)), want(y.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t g = m / (M / G);
          double acc = b[m];
          for (int64_t c = 0; c < C / G; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * S - pt + kh, iw = ow * S - pl + kw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x[((n * C + g * (C / G) + c) * H + ih) * W + iw] *
                       w[((m * (C / G) + c) * KH + kh) * KW + kw];
              }
          want[((n * M + m) * OH + oh) * OW + ow] = float(acc);
        }
  const Attrs attrs = conv2d_attrs(KH, KW, S, {pt, pl, pb, pr}, G);
  KernelContext ctx =
      kernel_context(attrs, {view(x, {N, C, H, W}), view(w, {M, C / G, KH, KW}), view(b, {M})},
                     {view(y, {N, M, OH, OW})}, "Conv");
  kernel_Conv(ctx);  // one-off: no state slot
  expect_near_all(y, want);
  // Through a cached primitive, run twice.
  std::unique_ptr<KernelState> state;
  ctx.state = &state;
  for (int run = 0; run < 2; ++run) {
    std::fill(y.begin(), y.end(), 0.f);
    kernel_Conv(ctx);
    expect_near_all(y, want);
  }
  EXPECT_NE(state, nullptr);
}

TEST(NnKernels, Conv2dStridePadsGroups) {
  check_conv2d(2, 4, 7, 6, 6, 2, 3, 2, 2, 1, 0, 2, 1);  // few channels: the plain input
  // Channel counts that fill 16-channel blocks: the blocked format (conv.cc), grouped or not.
  check_conv2d(2, 32, 9, 8, 16, 1, 3, 3, 1, 1, 1, 1, 1);
  check_conv2d(2, 32, 6, 7, 32, 2, 1, 1, 2, 0, 0, 0, 0);
}

TEST(NnKernels, MatMulBatchBroadcast) {
  // a: [2, 1, 3, 4], b: [3, 4, 5] -> [2, 3, 3, 5]; b transposed in memory as [3, 5, 4].
  const int64_t B0 = 2, B1 = 3, M = 3, K = 4, N = 5;
  auto a = random_values(B0 * M * K, 4), b = random_values(B1 * N * K, 5);
  std::vector<float> want(size_t(B0 * B1 * M * N));
  for (int64_t i = 0; i < B0; ++i)
    for (int64_t j = 0; j < B1; ++j)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += a[(i * M + m) * K + k] * b[(j * N + n) * K + k];
          want[((i * B1 + j) * M + m) * N + n] = float(acc);
        }
  Attrs attrs;
  attrs.set("transpose_b", int64_t(1));
  std::vector<float> y(want.size());
  KernelContext ctx = kernel_context(attrs, {view(a, {B0, 1, M, K}), view(b, {B1, N, K})},
                                     {view(y, {B0, B1, M, N})}, "MatMul");
  kernel_MatMul(ctx);
  expect_near_all(y, want);

  // The same product through the plain-loop path (f64).
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end()), yd(want.size());
  KernelContext ctx64 = kernel_context(
      attrs,
      {TensorView{DType::F64, {B0, 1, M, K}, ad.data()}, TensorView{DType::F64, {B1, N, K}, bd.data()}},
      {TensorView{DType::F64, {B0, B1, M, N}, yd.data()}}, "MatMul");
  kernel_MatMul(ctx64);
  expect_near_all(std::vector<float>(yd.begin(), yd.end()), want);
}

// ConvGradFilter(dy, x) -> dw, and with a second output the bias gradient db (oneDNN's
// diff_bias, conv_bias_grad.h): dw = sum over n, oh, ow of dy * the input window, db = sum of dy
// over n, oh, ow, against double sums; dw the same with and without db. Channel counts of
// 16-channel blocks (the blocked kernels) and of fewer.
TEST(NnKernels, ConvGradFilterWithAndWithoutTheBiasGradient) {
  for (const auto& [C, M] : {std::pair<int64_t, int64_t>{16, 32}, {3, 5}}) {
    const int64_t N = 2, H = 7, W = 8, KH = 3, KW = 3, OH = H - KH + 1, OW = W - KW + 1;
    auto dy = random_values(N * M * OH * OW, 9), x = random_values(N * C * H * W, 10);
    std::vector<float> want_dw(static_cast<size_t>(M * C * KH * KW)), want_db(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) {
      double db = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) db += dy[size_t(((n * M + m) * OH + oh) * OW + ow)];
      want_db[size_t(m)] = float(db);
      for (int64_t c = 0; c < C; ++c)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            double acc = 0;
            for (int64_t n = 0; n < N; ++n)
              for (int64_t oh = 0; oh < OH; ++oh)
                for (int64_t ow = 0; ow < OW; ++ow)
                  acc += double(dy[size_t(((n * M + m) * OH + oh) * OW + ow)]) *
                         double(x[size_t(((n * C + c) * H + oh + kh) * W + ow + kw)]);
            want_dw[size_t(((m * C + c) * KH + kh) * KW + kw)] = float(acc);
          }
    }
    const Attrs attrs = conv2d_attrs(KH, KW, 1, {0, 0, 0, 0}, 1);
    std::vector<float> dw(want_dw.size()), dw_alone(want_dw.size()), db(want_db.size());
    KernelContext alone = kernel_context(attrs, {view(dy, {N, M, OH, OW}), view(x, {N, C, H, W})},
                                         {view(dw_alone, {M, C, KH, KW})}, "ConvGradFilter");
    kernel_ConvGradFilter(alone);
    KernelContext both = kernel_context(attrs, {view(dy, {N, M, OH, OW}), view(x, {N, C, H, W})},
                                        {view(dw, {M, C, KH, KW}), view(db, {M})}, "ConvGradFilter");
    kernel_ConvGradFilter(both);
    expect_near_all(dw_alone, want_dw);
    expect_near_all(dw, want_dw);
    expect_near_all(db, want_db);
  }
}

// A transposed B (a Linear layer's [N, K] weight) with a bias and alpha: a small one is
// reordered before oneDNN's matmul, a large one (over 32768 elements) read strided
// (matmul.cc); both against the sum in double, the second run through the cached primitive.
TEST(NnKernels, MatMulTransposedWeightsSmallAndLarge) {
  for (const auto& [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{5, 64, 48}, {5, 300, 120}}) {
    auto a = random_values(M * K, 6), w = random_values(N * K, 7), bias = random_values(N, 8);
    std::vector<float> want(size_t(M * N)), y(want.size());
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += double(a[m * K + k]) * double(w[n * K + k]);
        want[size_t(m * N + n)] = float(0.5 * acc + bias[n]);
      }
    Attrs attrs;
    attrs.set("transpose_b", int64_t(1));
    attrs.set("alpha", 0.5);
    KernelContext ctx = kernel_context(attrs, {view(a, {M, K}), view(w, {N, K}), view(bias, {N})},
                                       {view(y, {M, N})}, "MatMul");
    std::unique_ptr<KernelState> state;
    ctx.state = &state;
    for (int run = 0; run < 2; ++run) {
      std::fill(y.begin(), y.end(), 0.f);
      kernel_MatMul(ctx);
      expect_near_all(y, want);
    }
  }
}

// Attention against its formula in double: per group, o = softmax(scale q kᵀ) v over the keys
// and lse = log Σ exp(scale q kᵀ); S, Sk, D and Dv all differ.
TEST(NnKernels, AttentionIsSoftmaxOfScaledScoresTimesValues) {
  const int64_t G = 2, S = 3, Sk = 5, D = 4, Dv = 3;
  const double scale = 0.7;
  auto q = random_values(G * S * D, 11), k = random_values(G * Sk * D, 12),
       v = random_values(G * Sk * Dv, 13);
  std::vector<float> want_o(size_t(G * S * Dv)), want_lse(size_t(G * S));
  for (int64_t g = 0; g < G; ++g)
    for (int64_t i = 0; i < S; ++i) {
      std::vector<double> s(static_cast<size_t>(Sk));
      double max = -1e300, sum = 0;
      for (int64_t j = 0; j < Sk; ++j) {
        for (int64_t d = 0; d < D; ++d) s[j] += double(q[(g * S + i) * D + d]) * k[(g * Sk + j) * D + d];
        s[j] *= scale;
        max = std::max(max, s[j]);
      }
      for (int64_t j = 0; j < Sk; ++j) sum += std::exp(s[j] - max);
      const double lse = max + std::log(sum);
      want_lse[g * S + i] = float(lse);
      for (int64_t c = 0; c < Dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < Sk; ++j) acc += std::exp(s[j] - lse) * v[(g * Sk + j) * Dv + c];
        want_o[(g * S + i) * Dv + c] = float(acc);
      }
    }
  Attrs attrs;
  attrs.set("scale", scale);
  std::vector<float> o(want_o.size()), lse(want_lse.size());
  KernelContext ctx = kernel_context(attrs, {view(q, {G, S, D}), view(k, {G, Sk, D}), view(v, {G, Sk, Dv})},
                                     {view(o, {G, S, Dv}), view(lse, {G, S})}, "Attention");
  kernel_Attention(ctx);
  expect_near_all(o, want_o);
  expect_near_all(lse, want_lse);
}

// Seq-major Attention (q [B, S, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv]) is the [B, H, S, D]
// problem of its operands with the heads swapped out of the rows: o (swapped back), lse and the
// backward's dq, dk and dv are the same numbers. Causal, so the row index must be the sequence's.
TEST(NnKernels, AttentionSeqMajorIsTheHeadsSwappedProblem) {
  const int64_t B = 2, S = 5, Sk = 4, H = 3, D = 4, Dv = 2;
  // [B, X, H, W] <-> [B, H, X, W]
  const auto swap_heads = [&](const std::vector<float>& x, int64_t rows, int64_t heads, int64_t width) {
    std::vector<float> y(x.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t c = 0; c < width; ++c)
            y[((b * heads + h) * rows + i) * width + c] = x[((b * rows + i) * heads + h) * width + c];
    return y;
  };
  auto q = random_values(B * S * H * D, 21), k = random_values(B * Sk * H * D, 22),
       v = random_values(B * Sk * H * Dv, 23), dout = random_values(B * S * H * Dv, 24);
  auto qh = swap_heads(q, S, H, D), kh = swap_heads(k, Sk, H, D), vh = swap_heads(v, Sk, H, Dv),
       douth = swap_heads(dout, S, H, Dv);
  // Forward and backward of one layout: {o, lse, dq, dk, dv}.
  const auto run = [&](bool seq_major, std::vector<float>& qx, std::vector<float>& kx, std::vector<float>& vx,
                       std::vector<float>& dx) {
    Attrs attrs;
    attrs.set("scale", 0.6);
    attrs.set("causal", int64_t(1));
    if (seq_major) attrs.set("seq_major", int64_t(1));
    const Shape qs = seq_major ? Shape{B, S, H, D} : Shape{B, H, S, D},
                ks = seq_major ? Shape{B, Sk, H, D} : Shape{B, H, Sk, D},
                vs = seq_major ? Shape{B, Sk, H, Dv} : Shape{B, H, Sk, Dv},
                os = seq_major ? Shape{B, S, H, Dv} : Shape{B, H, S, Dv};
    std::vector<std::vector<float>> r = {std::vector<float>(size_t(B * S * H * Dv)),
                                         std::vector<float>(size_t(B * H * S)), std::vector<float>(qx.size()),
                                         std::vector<float>(kx.size()), std::vector<float>(vx.size())};
    KernelContext fwd = kernel_context(attrs, {view(qx, qs), view(kx, ks), view(vx, vs)},
                                       {view(r[0], os), view(r[1], {B, H, S})}, "Attention");
    kernel_Attention(fwd);
    KernelContext bwd = kernel_context(
        attrs,
        {view(dx, os), view(qx, qs), view(kx, ks), view(vx, vs), view(r[0], os), view(r[1], {B, H, S})},
        {view(r[2], qs), view(r[3], ks), view(r[4], vs)}, "AttentionGrad");
    kernel_AttentionGrad(bwd);
    return r;
  };
  const auto seq = run(true, q, k, v, dout), heads = run(false, qh, kh, vh, douth);
  EXPECT_EQ(swap_heads(seq[0], S, H, Dv), heads[0]);
  EXPECT_EQ(seq[1], heads[1]);
  EXPECT_EQ(swap_heads(seq[2], S, H, D), heads[2]);
  EXPECT_EQ(swap_heads(seq[3], Sk, H, D), heads[3]);
  EXPECT_EQ(swap_heads(seq[4], Sk, H, Dv), heads[4]);
  EXPECT_NE(seq[0], std::vector<float>(seq[0].size(), 0.0f));
}

TEST(NnKernels, MatMulVectorOperands) {
  // [4] x [2, 4, 3] -> [2, 3]
  auto a = random_values(4, 6), b = random_values(2 * 4 * 3, 7);
  std::vector<float> want(6), y(6);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t k = 0; k < 4; ++k) want[i * 3 + n] += a[k] * b[(i * 4 + k) * 3 + n];
  Attrs attrs;
  KernelContext ctx = kernel_context(attrs, {view(a, {4}), view(b, {2, 4, 3})}, {view(y, {2, 3})}, "MatMul");
  kernel_MatMul(ctx);
  expect_near_all(y, want);
}

// MaxPool 2x2/2 on an even input (its vectorized path) against the window maximum by hand, with
// ties and NaNs in each tap position of a window (a NaN is the maximum, as in torch).
TEST(NnKernels, MaxPool2x2TilingByHand) {
  const int64_t N = 2, C = 3, H = 6, W = 10;
  std::vector<float> x = random_values(N * C * H * W, 7);
  for (size_t i = 0; i < x.size(); i += 3) x[i] = std::round(x[i]);  // ties
  for (size_t i : {size_t(0), size_t(3), size_t(W + 4), size_t(W + 7)}) x[i] = std::nanf("");
  x[2 * W + 1] = std::numeric_limits<float>::infinity();
  std::vector<float> y(size_t(N * C * (H / 2) * (W / 2)));
  Attrs a;
  a.set("kernel_shape", Shape{2, 2});
  a.set("strides", Shape{2, 2});
  KernelContext ctx = kernel_context(a, {view(x, {N, C, H, W})}, {view(y, {N, C, H / 2, W / 2})}, "MaxPool");
  kernel_MaxPool(ctx);
  for (int64_t p = 0; p < N * C; ++p)
    for (int64_t oh = 0; oh < H / 2; ++oh)
      for (int64_t ow = 0; ow < W / 2; ++ow) {
        const float* xp = x.data() + p * H * W + 2 * oh * W + 2 * ow;
        float want = xp[0];
        for (float v : {xp[1], xp[W], xp[W + 1]}) want = v > want || std::isnan(v) ? v : want;
        const float got = y[size_t((p * (H / 2) + oh) * (W / 2) + ow)];
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(got));
        else
          EXPECT_EQ(got, want) << p << " " << oh << " " << ow;
      }
}

// MaxPool off the 2x2 path (overlapping 3x3 windows, stride 1, padding): on oneDNN without
// indices, on the general loop with them. A NaN anywhere in a window is its maximum (torch's
// max_pool2d), and the index points at it.
TEST(NnKernels, MaxPoolPropagatesNaNOnEveryPath) {
  const int64_t H = 5, W = 6;
  std::vector<float> x = random_values(H * W, 9);
  const int64_t nan_at = 2 * W + 3;
  x[size_t(nan_at)] = std::nanf("");
  x[0] = -std::numeric_limits<float>::infinity();
  Attrs a;
  a.set("kernel_shape", Shape{3, 3});
  a.set("pads", Shape{1, 1, 1, 1});
  const Shape ys = {1, 1, H, W};
  std::vector<float> y(size_t(H * W)), y_idx(size_t(H * W));
  std::vector<int64_t> idx(size_t(H * W));
  KernelContext plain = kernel_context(a, {view(x, {1, 1, H, W})}, {view(y, ys)}, "MaxPool");
  kernel_MaxPool(plain);
  KernelContext with_idx = kernel_context(
      a, {view(x, {1, 1, H, W})}, {view(y_idx, ys), test::view(DType::I64, ys, idx.data())}, "MaxPool");
  kernel_MaxPool(with_idx);
  for (int64_t oh = 0; oh < H; ++oh)
    for (int64_t ow = 0; ow < W; ++ow) {
      const size_t o = size_t(oh * W + ow);
      if (std::abs(oh - 2) <= 1 && std::abs(ow - 3) <= 1) {
        EXPECT_TRUE(std::isnan(y[o])) << oh << " " << ow;
        EXPECT_TRUE(std::isnan(y_idx[o])) << oh << " " << ow;
        EXPECT_EQ(idx[o], nan_at) << oh << " " << ow;
        continue;
      }
      float want = -std::numeric_limits<float>::infinity();
      for (int64_t i = std::max<int64_t>(oh - 1, 0); i <= std::min(oh + 1, H - 1); ++i)
        for (int64_t j = std::max<int64_t>(ow - 1, 0); j <= std::min(ow + 1, W - 1); ++j)
          want = std::max(want, x[size_t(i * W + j)]);
      EXPECT_EQ(y[o], want) << oh << " " << ow;
      EXPECT_EQ(y_idx[o], want) << oh << " " << ow;
    }
}

}  // namespace
}  // namespace dlc::cpu
