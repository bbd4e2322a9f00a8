// CPU AveragePool and MaxPool, 1-D to 3-D with explicit pads, dilations and ceil_mode. f32
// without MaxPool indices runs on oneDNN's pooling_v2; everything else (indices, other dtypes,
// ceil-mode windows oneDNN would average differently) on an OpenMP loop; f32 2x2/2 max pooling
// that tiles the input on a vectorized loop of its own.
#include <algorithm>
#include <limits>

#include "runtime/cpu/channels_first.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/pool_window.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

template <typename T>
void average_pool(const PoolGeometry& g, bool include_pad, const T* x, T* y) {
  pool_loop(g, [&](int64_t pl, int64_t oi, const PoolWindow& w) {
    const T* xp = x + pl * g.in_plane();
    double sum = 0;
    w.for_each_tap([&](int64_t i0, int64_t i1, int64_t i2) { sum += double(xp[w.offset(i0, i1, i2)]); });
    const int64_t count = include_pad ? w.padded : w.valid();
    y[pl * g.out_plane() + oi] = count ? T(sum / double(count)) : T(0);
  });
}

// Max pooling; `indices` (optional) receives the flat input index, column-major over the
// spatial dims when `col_major`.
template <typename T>
void max_pool(const PoolGeometry& g, const T* x, T* y, int64_t* indices, bool col_major) {
  pool_loop(g, [&](int64_t pl, int64_t oi, const PoolWindow& w) {
    const T* xp = x + pl * g.in_plane();
    T best = std::numeric_limits<T>::lowest();
    int64_t best_idx = -1;
    w.for_each_tap([&](int64_t i0, int64_t i1, int64_t i2) {
      const T v = xp[w.offset(i0, i1, i2)];
      if (best_idx < 0 || max_pool_takes(v, best)) {
        best = v;
        best_idx = col_major ? (i2 * g.in[1] + i1) * g.in[0] + i0 : w.offset(i0, i1, i2);
      }
    });
    y[pl * g.out_plane() + oi] = best;
    if (indices) indices[pl * g.out_plane() + oi] = best_idx < 0 ? -1 : pl * g.in_plane() + best_idx;
  });
}

// f32 MaxPool over 2x2/2 windows tiling the input (tiles_2x2), vectorized over a row of windows;
// taps are taken as in max_pool (max_pool_takes: NaN propagates), which MaxPoolGrad relies on.
void max_pool_2x2(const PoolGeometry& g, const float* x, float* y) {
  const int64_t W = g.in[2], OH = g.out[1], OW = g.out[2];
#pragma omp parallel for schedule(static) if (g.planes * g.out_plane() > 4096)
  for (int64_t row = 0; row < g.planes * OH; ++row) {
    const float* x0 = x + row * 2 * W;
    const float* x1 = x0 + W;
    float* yr = y + row * OW;
#pragma omp simd
    for (int64_t ow = 0; ow < OW; ++ow) {
      float m = x0[2 * ow];
      m = max_pool_takes(x0[2 * ow + 1], m) ? x0[2 * ow + 1] : m;
      m = max_pool_takes(x1[2 * ow], m) ? x1[2 * ow] : m;
      yr[ow] = max_pool_takes(x1[2 * ow + 1], m) ? x1[2 * ow + 1] : m;
    }
  }
}

// Whether an f32 tensor holds a NaN (other dtypes: false).
bool has_nan(const TensorView& v) {
  if (v.dtype != DType::F32) return false;
  const float* x = v.as<float>();
  const int64_t n = v.numel();
  bool any = false;
#pragma omp simd reduction(| : any)
  for (int64_t i = 0; i < n; ++i) any |= x[i] != x[i];
  return any;
}

// oneDNN pooling for f32; returns false where oneDNN's semantics differ or it declines.
bool try_onednn_pool(const KernelContext& ctx, const PoolGeometry& g, dnnl::algorithm alg) {
  using namespace onednn;
  if (ctx.inputs[0].dtype != DType::F32) return false;
  dnnl::memory::dims strides, kernel, dilation, pad_l, pad_r;
  for (size_t i = 3 - g.spatial; i < 3; ++i) {
    const int64_t ext = (g.k[i] - 1) * g.d[i] + 1;
    int64_t pr = g.pe[i];
    // ceil_mode: extend the right padding so that oneDNN's floor division gives `out`.
    if ((g.in[i] + g.pb[i] + pr - ext) / g.s[i] + 1 != g.out[i]) {
      if (alg == dnnl::algorithm::pooling_avg_include_padding) return false;
      pr = (g.out[i] - 1) * g.s[i] + ext - g.in[i] - g.pb[i];
    }
    strides.push_back(g.s[i]);
    kernel.push_back(g.k[i]);
    dilation.push_back(g.d[i] - 1);
    pad_l.push_back(g.pb[i]);
    pad_r.push_back(pr);
  }
  std::unique_ptr<KernelState> local;
  try {
    auto& st = cached_state<PrimitiveState>(ctx, local, [&] {
      const auto x_md = plain_desc(ctx.inputs[0].dims, DType::F32),
                 y_md = plain_desc(ctx.outputs[0].dims, DType::F32);
      dnnl::pooling_v2_forward::primitive_desc pd(
          dnnl::pooling_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, x_md, y_md, strides, kernel,
                                         dilation, pad_l, pad_r),
          engine());
      PrimitiveState s;
      s.prim = dnnl::pooling_v2_forward(pd);
      s.args[DNNL_ARG_SRC] = Arg(x_md, pd.src_desc());
      s.args[DNNL_ARG_DST] = Arg(y_md, pd.dst_desc());
      return s;
    });
    execute(st, {{DNNL_ARG_SRC, ctx.inputs[0].data}}, {{DNNL_ARG_DST, ctx.outputs[0].data}});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace

void kernel_AveragePool(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_AveragePool)) return;
  if (run_widened(ctx, kernel_AveragePool)) return;
  const PoolGeometry g = pool_geometry(ctx, ctx.inputs[0].dims, ctx.outputs[0].dims);
  const bool include_pad = ctx.attrs.i("count_include_pad", 0) != 0;
  if (try_onednn_pool(ctx, g,
                      include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                  : dnnl::algorithm::pooling_avg_exclude_padding))
    return;
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    average_pool<T>(g, include_pad, ctx.inputs[0].as<T>(), ctx.outputs[0].as<T>());
  });
}

void kernel_MaxPool(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_MaxPool)) return;
  if (run_widened(ctx, kernel_MaxPool)) return;  // mixed precision: half in, half out, f32 inside
  const PoolGeometry g = pool_geometry(ctx, ctx.inputs[0].dims, ctx.outputs[0].dims);
  const bool want_indices = ctx.has_output(1);
  if (!want_indices && ctx.inputs[0].dtype == DType::F32 && tiles_2x2(g))
    return max_pool_2x2(g, ctx.inputs[0].as<float>(), ctx.outputs[0].as<float>());
  // oneDNN's max pooling drops NaN; an input holding one takes the loop (max_pool_takes).
  if (!want_indices && !has_nan(ctx.inputs[0]) && try_onednn_pool(ctx, g, dnnl::algorithm::pooling_max))
    return;
  int64_t* indices = want_indices ? ctx.outputs[1].as<int64_t>() : nullptr;
  const bool col_major = ctx.attrs.i("storage_order", 0) != 0;
  dispatch_numeric(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool<T>(g, ctx.inputs[0].as<T>(), ctx.outputs[0].as<T>(), indices, col_major);
  });
}

}  // namespace dlc::cpu
