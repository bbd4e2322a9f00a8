// CPU GatherGrad: the gradient of Gather, dy added into the gathered slices of a zero tensor of
// the data's shape. Indices are bucketed by target slice first, so every target slice is summed by
// one thread in index order: parallel, deterministic, and duplicates (a repeated token of an
// embedding lookup) add up; sums accumulate in double.
#include <algorithm>
#include <vector>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/indices.h"
#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

namespace {

template <typename T>
void gather_grad(const KernelContext& ctx) {
  const TensorView& dyv = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  int64_t axis = ctx.attrs.i("axis", 0);
  if (axis < 0) axis += out.rank();
  const int64_t axis_dim = out.dims[size_t(axis)];
  std::vector<int64_t> idx = read_indices(ctx, ctx.inputs[1]);
  for (int64_t& i : idx) i = wrap_index(ctx, i, axis_dim);
  const int64_t n = int64_t(idx.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out.dims[size_t(d)];
  for (int64_t d = axis + 1; d < out.rank(); ++d) inner *= out.dims[size_t(d)];
  // Positions k with idx[k] == t are sources[first[t] .. first[t + 1]), in increasing k.
  std::vector<int64_t> first(size_t(axis_dim) + 1, 0), sources(static_cast<size_t>(n));
  for (int64_t i : idx) ++first[size_t(i) + 1];
  for (int64_t t = 0; t < axis_dim; ++t) first[size_t(t) + 1] += first[size_t(t)];
  std::vector<int64_t> fill(first.begin(), first.end() - 1);
  for (int64_t k = 0; k < n; ++k) sources[size_t(fill[size_t(idx[size_t(k)])]++)] = k;
  const T* dy = dyv.as<T>();
  T* dx = out.as<T>();
  if (inner == 1) {  // a gather along the last axis (Resize's taps): one scalar sum per target
#pragma omp parallel for collapse(2) schedule(static) if (out.numel() + dyv.numel() > 32768)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t t = 0; t < axis_dim; ++t) {
        double acc = 0;
        for (int64_t s = first[size_t(t)]; s < first[size_t(t) + 1]; ++s)
          acc += double(dy[o * n + sources[size_t(s)]]);
        dx[o * axis_dim + t] = T(acc);
      }
    return;
  }
#pragma omp parallel if (out.numel() + dyv.numel() > 32768)
  {
    std::vector<double> acc(static_cast<size_t>(inner));
#pragma omp for collapse(2) schedule(static)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t t = 0; t < axis_dim; ++t) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t s = first[size_t(t)]; s < first[size_t(t) + 1]; ++s) {
          const T* src = dy + (o * n + sources[size_t(s)]) * inner;
          for (int64_t i = 0; i < inner; ++i) acc[size_t(i)] += double(src[i]);
        }
        T* dst = dx + (o * axis_dim + t) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = T(acc[size_t(i)]);
      }
  }
}

}  // namespace

void kernel_GatherGrad(const KernelContext& ctx) {
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) { gather_grad<typename decltype(tag)::type>(ctx); });
}

}  // namespace dlc::cpu
