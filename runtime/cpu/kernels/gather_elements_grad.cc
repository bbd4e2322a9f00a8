// CPU GatherElementsGrad: the gradient of GatherElements, each dy element (dy has the indices'
// shape) added, in double, to the data element its index chose, into zeros. One pass in index
// order, so duplicates add in a fixed order (the CUDA kernel sums each element's contributions in
// the same order, in double: the same bits).
#include <type_traits>
#include <vector>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/indices.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/strided_copy.h"

namespace dlc::cpu {

namespace {

template <typename T>
void gather_elements_grad(const KernelContext& ctx) {
  // A half type through float, f32 and f64 as themselves.
  using Wide = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
  const TensorView& dy = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  const int64_t rank = out.rank();
  int64_t axis = ctx.attrs.i("axis", 0);
  if (axis < 0) axis += rank;
  std::vector<int64_t> idx = read_indices(ctx, ctx.inputs[1]);
  for (int64_t& i : idx) i = wrap_index(ctx, i, out.dims[size_t(axis)]);
  const Shape strides = row_major_strides(out.dims);
  std::vector<double> sums(size_t(out.numel()), 0.0);
  const T* src = dy.as<T>();
  for (int64_t p = 0, n = dy.numel(); p < n; ++p)
    sums[size_t(gather_elements_offset(p, idx[size_t(p)], dy.dims, strides, axis))] += double(Wide(src[p]));
  T* dst = out.as<T>();
  for (size_t i = 0; i < sums.size(); ++i) dst[i] = T(Wide(sums[i]));
}

}  // namespace

void kernel_GatherElementsGrad(const KernelContext& ctx) {
  dispatch_float_ext(ctx.inputs[0].dtype, ctx,
                     [&](auto tag) { gather_elements_grad<typename decltype(tag)::type>(ctx); });
}

}  // namespace dlc::cpu
