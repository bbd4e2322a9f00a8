// CPU AveragePoolGrad: the gradient of AveragePool; each output's dy is spread evenly over the
// taps its window averaged (count_include_pad decides the divisor, as in the forward).
#include <algorithm>

#include "runtime/cpu/channels_first.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/pool_window.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

void kernel_AveragePoolGrad(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_AveragePoolGrad)) return;
  if (run_widened(ctx, kernel_AveragePoolGrad)) return;
  const PoolGeometry g = pool_geometry(ctx, ctx.outputs[0].dims, ctx.inputs[0].dims);
  const bool include_pad = ctx.attrs.i("count_include_pad", 0) != 0;
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* dy = ctx.inputs[0].as<T>();
    T* dx = ctx.outputs[0].as<T>();
    std::fill_n(dx, ctx.outputs[0].numel(), T(0));
    pool_loop(g, [&](int64_t pl, int64_t oi, const PoolWindow& w) {
      const int64_t count = include_pad ? w.padded : w.valid();
      if (!count) return;
      const T share = T(double(dy[pl * g.out_plane() + oi]) / double(count));
      T* dxp = dx + pl * g.in_plane();
      w.for_each_tap([&](int64_t i0, int64_t i1, int64_t i2) { dxp[w.offset(i0, i1, i2)] += share; });
    });
  });
}

}  // namespace dlc::cpu
