// Slice's strided view (slice_view.h).
#include "runtime/cpu/slice_view.h"

#include "runtime/cpu/strided_copy.h"

namespace dlc::cpu {

SliceView slice_view(const KernelContext& ctx, const Shape& full, const Shape& sliced) {
  const Shape& starts = ctx.attrs.ints("starts");
  const Shape& axes = ctx.attrs.ints("axes");
  const Shape steps = ctx.attrs.ints("steps", Shape(starts.size(), 1));
  if (axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, axes and steps differ in length");
  const int64_t rank = int64_t(full.size());
  SliceView view{0, row_major_strides(full)};
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank) ctx.fail("axis {} is out of range for rank {}", axes[k], rank);
    const int64_t dim = full[size_t(axis)];
    const int64_t last = starts[k] + (sliced[size_t(axis)] - 1) * steps[k];
    if (starts[k] < 0 || starts[k] >= dim || last < 0 || last >= dim)
      ctx.fail("slice {}:{}:{} of axis {} leaves [0, {})", starts[k], last, steps[k], axis, dim);
    view.offset += starts[k] * view.strides[size_t(axis)];
    view.strides[size_t(axis)] *= steps[k];
  }
  return view;
}

}  // namespace dlc::cpu
