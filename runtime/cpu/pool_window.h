// The pooling window of AveragePool/MaxPool and their gradients, spatial dims padded to 3
// (leading size-1 dims), and the loop over every output position with its valid kernel taps.
#pragma once

#include <type_traits>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

struct PoolGeometry {
  int64_t planes = 0;  // N * C
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  size_t spatial = 0;

  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t out_plane() const { return out[0] * out[1] * out[2]; }
};

/// The window of `ctx`'s attributes (kernel_shape, strides, dilations, pads) between an input of
/// dims `x` and an output of dims `y` (N x C x D1… with 1 to 3 spatial dims).
PoolGeometry pool_geometry(const KernelContext& ctx, const Shape& x, const Shape& y);

/// Whether the windows are 2x2 with stride 2, no dilation and no leading padding, and tile the
/// input exactly (2-D, even sizes): the usual pooling, which kernels special-case.
bool tiles_2x2(const PoolGeometry& g);

/// The taps of one output position: valid kernel taps [lo, hi) per dim and how many taps lie in
/// the padded extent.
struct PoolWindow {
  const PoolGeometry& g;
  int64_t o[3], lo[3], hi[3], padded;

  int64_t valid() const { return (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
  /// Calls tap(i0, i1, i2) with the input coordinates of every valid tap, in row-major order.
  template <typename Tap>
  void for_each_tap(Tap&& tap) const {
    for (int64_t a = lo[0]; a < hi[0]; ++a)
      for (int64_t b = lo[1]; b < hi[1]; ++b)
        for (int64_t c = lo[2]; c < hi[2]; ++c)
          tap(o[0] * g.s[0] - g.pb[0] + a * g.d[0], o[1] * g.s[1] - g.pb[1] + b * g.d[1],
              o[2] * g.s[2] - g.pb[2] + c * g.d[2]);
  }
  /// The row-major offset of input coordinates in a plane.
  int64_t offset(int64_t i0, int64_t i1, int64_t i2) const { return (i0 * g.in[1] + i1) * g.in[2] + i2; }
};

/// Whether MaxPool (and MaxPoolGrad, which must pick the same tap) takes tap value `v` over the
/// window's best so far: when it is greater or NaN, as torch's max_pool does (a NaN is the
/// window's maximum, the last NaN in row-major order wins). Branch-free (`|`, not `||`), so loops
/// vectorize.
template <typename T>
bool max_pool_takes(T v, T best) {
  if constexpr (std::is_floating_point_v<T>)
    return (v > best) | (v != v);
  else
    return v > best;
}

/// The valid taps [lo, hi) and the count of taps inside the padded extent of every output
/// coordinate of spatial dim i (0..2): windows along one dim depend only on that coordinate.
struct PoolDimTaps {
  std::vector<int64_t> lo, hi, padded;
  PoolDimTaps(const PoolGeometry& g, int i);
};

/// Calls visit(plane, output index in the plane, window) for every output element, in parallel
/// over planes (one thread per plane at a time, so a plane's writes never race).
template <typename Visit>
void pool_loop(const PoolGeometry& g, Visit&& visit) {
  const PoolDimTaps t0(g, 0), t1(g, 1), t2(g, 2);
#pragma omp parallel for schedule(static) if (g.planes * g.out_plane() > 4096)
  for (int64_t pl = 0; pl < g.planes; ++pl) {
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
          const size_t a = size_t(o0), b = size_t(o1), c = size_t(o2);
          const PoolWindow w{g,
                             {o0, o1, o2},
                             {t0.lo[a], t1.lo[b], t2.lo[c]},
                             {t0.hi[a], t1.hi[b], t2.hi[c]},
                             t0.padded[a] * t1.padded[b] * t2.padded[c]};
          visit(pl, (o0 * g.out[1] + o1) * g.out[2] + o2, w);
        }
  }
}

}  // namespace dlc::cpu
