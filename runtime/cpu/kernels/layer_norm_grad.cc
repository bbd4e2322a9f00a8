// CPU LayerNormGrad: the gradient of LayerNormalization over rows of D = numel(x.shape[axis:]),
// with the row statistics recomputed in double as the forward kernel computes them (moments.h).
//   dx = inv_std * (g - mean(g) - xhat * mean(g * xhat)),  g = dy * scale
//   dscale = Σ_rows dy * xhat,  dbias = Σ_rows dy
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/moments.h"
#include "runtime/cpu/simd_math.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

constexpr int64_t kColumnBlock = 64;  // columns summed per task for dscale/dbias

// Throws nothing (a DLC_SIMD_CLONES function must not); mean and inv_std hold `rows` values.
template <typename T>
DLC_SIMD_CLONES void layer_norm_grad_rows(const T* dy, const T* x, const T* scale, T* dx, T* dscale, T* dbias,
                                          double eps, int64_t rows, int64_t D, double* mean,
                                          double* inv_std) {
  const bool parallel = rows * D > 32768;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * D;
    const T* dyr = dy + r * D;
    Moments mo;
    mo.add(xr, D);
    const double m = mo.mean(), is = 1.0 / std::sqrt(mo.variance() + eps);
    double sum_g = 0, sum_g_xhat = 0;
    // Eight partial sums each (as Moments), so the adds do not wait on each other.
#pragma omp simd simdlen(8) reduction(+ : sum_g, sum_g_xhat)
    for (int64_t i = 0; i < D; ++i) {
      const double g = double(dyr[i]) * double(scale[i]);
      sum_g += g;
      sum_g_xhat += g * (double(xr[i]) - m) * is;
    }
    const double mean_g = sum_g / double(D), mean_g_xhat = sum_g_xhat / double(D);
    T* dxr = dx + r * D;
    for (int64_t i = 0; i < D; ++i) {
      const double xhat = (double(xr[i]) - m) * is;
      dxr[i] = T(is * (double(dyr[i]) * double(scale[i]) - mean_g - xhat * mean_g_xhat));
    }
    mean[r] = m;
    inv_std[r] = is;
  }
  const int64_t blocks = (D + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(static) if (parallel && blocks > 1)
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t j0 = b * kColumnBlock, n = std::min(kColumnBlock, D - j0);
    double ds[kColumnBlock] = {}, db[kColumnBlock] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * D + j0;
      const T* dyr = dy + r * D + j0;
      const double m = mean[r], is = inv_std[r];
      for (int64_t j = 0; j < n; ++j) {
        ds[j] += double(dyr[j]) * (double(xr[j]) - m) * is;
        db[j] += double(dyr[j]);
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      dscale[j0 + j] = T(ds[j]);
      dbias[j0 + j] = T(db[j]);
    }
  }
}

template <typename T>
void layer_norm_grad(const KernelContext& ctx) {
  const int64_t D = ctx.inputs[2].numel();
  const int64_t rows = D ? ctx.inputs[1].numel() / D : 0;
  std::vector<double> mean(static_cast<size_t>(rows)), inv_std(static_cast<size_t>(rows));
  layer_norm_grad_rows(ctx.inputs[0].as<T>(), ctx.inputs[1].as<T>(), ctx.inputs[2].as<T>(),
                       ctx.outputs[0].as<T>(), ctx.outputs[1].as<T>(), ctx.outputs[2].as<T>(),
                       ctx.attrs.f("epsilon", 1e-5), rows, D, mean.data(), inv_std.data());
}

}  // namespace

void kernel_LayerNormGrad(const KernelContext& ctx) {
  // Mixed precision's half dy of an f32 x: computed in f32.
  if (ctx.inputs[0].dtype != ctx.inputs[1].dtype && run_widened(ctx, kernel_LayerNormGrad)) return;
  dispatch_float(ctx.inputs[1].dtype, ctx,
                 [&](auto tag) { layer_norm_grad<typename decltype(tag)::type>(ctx); });
}

}  // namespace dlc::cpu
