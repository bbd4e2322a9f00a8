// CPU kernels of the training ops: activation/loss/normalization gradients (f32, and f64 where
// the finite-difference checks need it). ConvGradFilter lives in conv_grad.cc, MaxPoolGrad in
// max_pool_grad.cc, the optimizer updates in optimizer_update.cc.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/cpu/channel_dims.h"
#include "runtime/cpu/channels_first.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/epilogue.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/moments.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/simd_math.h"
#include "runtime/cpu/softmax.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

void require_f32(const KernelContext& ctx) {
  for (const TensorView& v : ctx.inputs)
    if (v.data && is_floating(v.dtype) && v.dtype != DType::F32)
      ctx.fail("dtype {} is not supported", dtype_name(v.dtype));
}

}  // namespace

void kernel_ReluGrad(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_ReluGrad)) return;  // mixed precision's half Relu (ResNet's, cnn_bias's)
  dispatch_float(ctx.outputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* dy = ctx.inputs[0].as<T>();
    const T* y = ctx.inputs[1].as<T>();
    T* dx = ctx.outputs[0].as<T>();
    parallel_chunks(ctx.outputs[0].numel(), 65536, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) {
        dx[i] = relu_grad_value(dy[i], y[i]);  // dy loaded unconditionally, so the select vectorizes
      }
    });
  });
}

void kernel_SoftmaxCrossEntropyGrad(const KernelContext& ctx) {
  require_f32(ctx);
  const TensorView& scores = ctx.inputs[1];
  const TensorView& labels = ctx.inputs[2];
  const ChannelDims l = channel_dims(scores.dims);
  const std::string reduction = ctx.attrs.s("reduction", "mean");
  const int64_t ignore = ctx.attrs.i("ignore_index", std::numeric_limits<int64_t>::min());
  auto label_at = [&](int64_t i) {
    return labels.dtype == DType::I32 ? int64_t(labels.as<int32_t>()[i]) : labels.as<int64_t>()[i];
  };
  const int64_t positions = l.n * l.spatial;
  int64_t counted = 0;
  for (int64_t i = 0; i < positions; ++i) {
    const int64_t label = label_at(i);
    if (label == ignore) continue;
    if (label < 0 || label >= l.c) ctx.fail("label {} is outside [0, {})", label, l.c);
    ++counted;
  }
  const float* dloss = ctx.inputs[0].as<float>();
  const float scale = reduction == "mean" ? (counted ? 1.f / float(counted) : 0.f) : 1.f;
  const bool per_position = reduction == "none";  // dloss holds one value per position
  float* dx = ctx.outputs[0].as<float>();
  softmax_along<false>(scores.as<float>(), dx, l.n, l.c, l.spatial);  // Softmax over axis 1 (the loss's)
  // dx = g * (softmax - one_hot(label)), and 0 at ignored positions.
  parallel_chunks(positions, 65536 / std::max<int64_t>(l.c, 1), [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* dp = dx + (p / l.spatial) * l.c * l.spatial + p % l.spatial;
      const int64_t label = label_at(p);
      const float g = (per_position ? dloss[p] : dloss[0]) * scale;
      for (int64_t c = 0; c < l.c; ++c)
        dp[c * l.spatial] = label == ignore ? 0.f : g * (dp[c * l.spatial] - (c == label ? 1.f : 0.f));
    }
  });
}

namespace {

// One BatchNormGrad, f32 operands in channels-first layout.
struct BatchNormGradArgs {
  const float *dy, *x, *scale, *y;  // y: the folded Relu's result, or null
  float *dx, *dscale, *dbias;
  ChannelDims dims;
  double eps;
};

// With m = N * inner values per channel, xhat = (x - mean) * invstd:
//   dbias = sum dy, dscale = sum dy * xhat, dx = scale * invstd * (dy - dbias / m - xhat * dscale / m).
// One pass gathers, per channel and in double, the moments of x shifted by its first value (as the
// forward's Moments) and the sums of dy and dy * (x - shift); a second writes
// dx = a * dy + b * (x - mean) + c. A folded ReluGrad (y given) first writes the channel's masked
// dy into `masked` (N * spatial values), which stays in cache: a mask inside the loops below,
// which also widen to double, keeps them from vectorizing (GCC leaves the select a branch) and
// made the kernel 3 to 4 times slower. Cloned for AVX2/AVX-512 (the double sums run 4 or 8
// wide); throws nothing (a DLC_SIMD_CLONES function must not).
DLC_SIMD_CLONES void batch_norm_grad_channel(const BatchNormGradArgs& a, int64_t c, float* masked) {
  const ChannelDims& l = a.dims;
  // Row b of the channel's gradient: dy's, or its masked copy.
  const auto grad_row = [&](int64_t b) {
    return a.y ? masked + b * l.spatial : a.dy + (b * l.c + c) * l.spatial;
  };
  if (a.y)
    for (int64_t b = 0; b < l.n; ++b) {
      const int64_t base = (b * l.c + c) * l.spatial;
      float* g = masked + b * l.spatial;
#pragma omp simd
      for (int64_t i = 0; i < l.spatial; ++i) g[i] = relu_grad_value(a.dy[base + i], a.y[base + i]);
    }
  Moments mo;
  mo.shift = double(a.x[c * l.spatial]);
  mo.count = l.n * l.spatial;
  double sdy = 0, sdy_x = 0;  // sums of dy and dy * (x - mo.shift)
  for (int64_t b = 0; b < l.n; ++b) {
    const float* xb = a.x + (b * l.c + c) * l.spatial;
    const float* g = grad_row(b);
    const double shift = mo.shift;
    double s = 0, ss = 0, sd = 0, sdx = 0;
#pragma omp simd simdlen(8) reduction(+ : s, ss, sd, sdx)
    for (int64_t i = 0; i < l.spatial; ++i) {
      const double d = double(xb[i]) - shift, gi = double(g[i]);
      s += d;
      ss += d * d;
      sd += gi;
      sdx += gi * d;
    }
    mo.sum += s;
    mo.sum_sq += ss;
    sdy += sd;
    sdy_x += sdx;
  }
  const double m = double(l.n * l.spatial);
  const double mean = mo.mean(), invstd = 1.0 / std::sqrt(mo.variance() + a.eps);
  const double sdy_xhat = (sdy_x - (mean - mo.shift) * sdy) * invstd;
  a.dbias[c] = float(sdy);
  a.dscale[c] = float(sdy_xhat);
  const double k = double(a.scale[c]) * invstd;
  const float fa = float(k), fb = float(-k * invstd * sdy_xhat / m), fc = float(-k * sdy / m),
              fmean = float(mean);
  for (int64_t b = 0; b < l.n; ++b) {
    const int64_t base = (b * l.c + c) * l.spatial;
    const float* g = grad_row(b);
#pragma omp simd
    for (int64_t i = 0; i < l.spatial; ++i) a.dx[base + i] = fa * g[i] + fb * (a.x[base + i] - fmean) + fc;
  }
}

}  // namespace

void kernel_BatchNormGrad(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_BatchNormGrad)) return;
  if (run_widened(ctx, kernel_BatchNormGrad)) return;  // mixed precision's half dy, x (and y)
  require_f32(ctx);
  const BatchNormGradArgs a{
      ctx.inputs[0].as<float>(),   ctx.inputs[1].as<float>(),
      ctx.inputs[2].as<float>(),   relu_epilogue(ctx) ? ctx.inputs[3].as<float>() : nullptr,
      ctx.outputs[0].as<float>(),  ctx.outputs[1].as<float>(),
      ctx.outputs[2].as<float>(),  channel_dims(ctx.inputs[1].dims),
      ctx.attrs.f("epsilon", 1e-5)};
  const ChannelDims& l = a.dims;
  if (l.n * l.spatial == 0) {
    std::fill_n(a.dscale, l.c, 0.f);
    std::fill_n(a.dbias, l.c, 0.f);
    return;
  }
#pragma omp parallel if (l.n * l.c * l.spatial > 32768)
  {
    std::vector<float> masked(a.y ? size_t(l.n * l.spatial) : 0);
#pragma omp for schedule(static)
    for (int64_t c = 0; c < l.c; ++c) batch_norm_grad_channel(a, c, masked.data());
  }
}

}  // namespace dlc::cpu
