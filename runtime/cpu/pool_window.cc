// The pooling window and its per-dimension taps.
#include "runtime/cpu/pool_window.h"

namespace dlc::cpu {

PoolGeometry pool_geometry(const KernelContext& ctx, const Shape& x, const Shape& y) {
  PoolGeometry g;
  if (x.size() < 3 || x.size() > 5 || y.size() != x.size())
    ctx.fail("input {} and output {} must be N x C with 1 to 3 spatial dims", shape_str(x), shape_str(y));
  g.spatial = x.size() - 2;
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

bool tiles_2x2(const PoolGeometry& g) {
  if (g.spatial != 2 || g.planes == 0) return false;
  for (int i = 1; i < 3; ++i)
    if (g.k[i] != 2 || g.s[i] != 2 || g.d[i] != 1 || g.pb[i] != 0 || g.in[i] != 2 * g.out[i]) return false;
  return true;
}

PoolDimTaps::PoolDimTaps(const PoolGeometry& g, int i) {
  for (int64_t o = 0; o < g.out[i]; ++o) {
    const int64_t start = o * g.s[i] - g.pb[i];
    int64_t first = 0, last = g.k[i], in_pad = 0;
    for (int64_t t = 0; t < g.k[i]; ++t) {
      const int64_t c = start + t * g.d[i];
      if (c < 0) first = t + 1;
      if (c >= g.in[i] && last == g.k[i]) last = t;
      if (c >= -g.pb[i] && c < g.in[i] + g.pe[i]) ++in_pad;
    }
    lo.push_back(first);
    hi.push_back(last);
    padded.push_back(in_pad);
  }
}

}  // namespace dlc::cpu
