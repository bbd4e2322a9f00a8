// CPU AveragePool and MaxPool, 1-D to 3-D with explicit pads, dilations and ceil_mode. f32
// without MaxPool indices runs on oneDNN's pooling_v2; everything else (indices, other dtypes,
// ceil-mode windows oneDNN would average differently) on an OpenMP loop.
#include <algorithm>
#include <limits>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/onednn.h"

namespace dlc::cpu {

namespace {

// The pooling window with spatial dims padded to 3 (leading size-1 dims).
struct PoolGeometry {
  int64_t planes = 0;  // N * C
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  size_t spatial = 0;
};

PoolGeometry pool_geometry(const KernelContext& ctx) {
  const Shape& x = ctx.inputs[0].dims;
  const Shape& y = ctx.outputs[0].dims;
  PoolGeometry g;
  g.spatial = x.size() - 2;
  if (x.size() < 3 || g.spatial > 3) ctx.fail("input {} must have 1 to 3 spatial dims", shape_str(x));
  const Attrs& a = ctx.attrs;
  Shape k = a.ints("kernel_shape"), s = a.ints("strides", Shape(g.spatial, 1));
  Shape d = a.ints("dilations", Shape(g.spatial, 1)), p = a.ints("pads", Shape(2 * g.spatial, 0));
  if (k.size() != g.spatial || s.size() != g.spatial || d.size() != g.spatial || p.size() != 2 * g.spatial)
    ctx.fail("window attributes do not match the input {}", shape_str(x));
  g.planes = x[0] * x[1];
  const size_t lead = 3 - g.spatial;
  for (size_t i = 0; i < 3; ++i) {
    const bool real = i >= lead;
    const size_t j = i - lead;
    g.in[i] = real ? x[j + 2] : 1;
    g.out[i] = real ? y[j + 2] : 1;
    g.k[i] = real ? k[j] : 1;
    g.s[i] = real ? s[j] : 1;
    g.d[i] = real ? d[j] : 1;
    g.pb[i] = real ? p[j] : 0;
    g.pe[i] = real ? p[j + g.spatial] : 0;
  }
  return g;
}

// Calls reduce(plane, output index in plane, input plane, output position, valid kernel taps
// [lo, hi) per dim, taps inside the padded extent) for every output element.
template <typename T, typename Reduce>
void pool_loop(const PoolGeometry& g, const T* x, Reduce&& reduce) {
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
#pragma omp parallel for schedule(static) if (g.planes * out_plane > 4096)
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    const T* xp = x + pl * in_plane;
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          const int64_t o[3] = {o0, o1, o2};
          int64_t lo[3], hi[3], padded = 1;  // valid kernel taps [lo, hi) per dim
          for (int i = 0; i < 3; ++i) {
            const int64_t start = o[i] * g.s[i] - g.pb[i];
            lo[i] = 0;
            hi[i] = g.k[i];
            int64_t in_pad = 0;  // taps inside the padded extent
            for (int64_t t = 0; t < g.k[i]; ++t) {
              const int64_t c = start + t * g.d[i];
              if (c < 0) lo[i] = t + 1;
              if (c >= g.in[i] && hi[i] == g.k[i]) hi[i] = t;
              if (c >= -g.pb[i] && c < g.in[i] + g.pe[i]) ++in_pad;
            }
            padded *= in_pad;
          }
          reduce(pl, ((o0 * g.out[1]) + o1) * g.out[2] + o2, xp, o, lo, hi, padded);
        }
  }
}

template <typename T>
void average_pool(const PoolGeometry& g, bool include_pad, const T* x, T* y) {
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  pool_loop<T>(g, x,
               [&](int64_t pl, int64_t oi, const T* xp, const int64_t* o, const int64_t* lo,
                   const int64_t* hi, int64_t padded) {
                 double sum = 0;
                 int64_t n = 0;
                 for (int64_t a = lo[0]; a < hi[0]; ++a)
                   for (int64_t b = lo[1]; b < hi[1]; ++b)
                     for (int64_t c = lo[2]; c < hi[2]; ++c, ++n) {
                       const int64_t i0 = o[0] * g.s[0] - g.pb[0] + a * g.d[0],
                                     i1 = o[1] * g.s[1] - g.pb[1] + b * g.d[1],
                                     i2 = o[2] * g.s[2] - g.pb[2] + c * g.d[2];
                       sum += double(xp[(i0 * g.in[1] + i1) * g.in[2] + i2]);
                     }
                 const int64_t count = include_pad ? padded : n;
                 y[pl * out_plane + oi] = count ? T(sum / double(count)) : T(0);
               });
}

// Max pooling; `indices` (optional) receives the flat input index, column-major over the
// spatial dims when `col_major`.
template <typename T>
void max_pool(const PoolGeometry& g, const T* x, T* y, int64_t* indices, bool col_major) {
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  pool_loop<T>(g, x,
               [&](int64_t pl, int64_t oi, const T* xp, const int64_t* o, const int64_t* lo,
                   const int64_t* hi, int64_t) {
                 T best = std::numeric_limits<T>::lowest();
                 int64_t best_idx = -1;
                 for (int64_t a = lo[0]; a < hi[0]; ++a)
                   for (int64_t b = lo[1]; b < hi[1]; ++b)
                     for (int64_t c = lo[2]; c < hi[2]; ++c) {
                       const int64_t i0 = o[0] * g.s[0] - g.pb[0] + a * g.d[0],
                                     i1 = o[1] * g.s[1] - g.pb[1] + b * g.d[1],
                                     i2 = o[2] * g.s[2] - g.pb[2] + c * g.d[2];
                       const T v = xp[(i0 * g.in[1] + i1) * g.in[2] + i2];
                       if (best_idx < 0 || v > best) {
                         best = v;
                         best_idx = col_major ? (i2 * g.in[1] + i1) * g.in[0] + i0
                                              : (i0 * g.in[1] + i1) * g.in[2] + i2;
                       }
                     }
                 y[pl * out_plane + oi] = best;
                 if (indices) indices[pl * out_plane + oi] = best_idx < 0 ? -1 : pl * in_plane + best_idx;
               });
}

// oneDNN pooling for f32; returns false where oneDNN's semantics differ or it declines.
bool try_onednn_pool(KernelContext& ctx, const PoolGeometry& g, dnnl::algorithm alg) {
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

void kernel_AveragePool(KernelContext& ctx) {
  const PoolGeometry g = pool_geometry(ctx);
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

void kernel_MaxPool(KernelContext& ctx) {
  const PoolGeometry g = pool_geometry(ctx);
  const bool want_indices = ctx.has_output(1);
  if (!want_indices && try_onednn_pool(ctx, g, dnnl::algorithm::pooling_max)) return;
  int64_t* indices = want_indices ? ctx.outputs[1].as<int64_t>() : nullptr;
  const bool col_major = ctx.attrs.i("storage_order", 0) != 0;
  dispatch_numeric(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool<T>(g, ctx.inputs[0].as<T>(), ctx.outputs[0].as<T>(), indices, col_major);
  });
}

}  // namespace dlc::cpu
