// CPU SliceGrad: the gradient of Slice, a zero tensor of the input's shape with dy copied to the
// sliced positions (the Slice's strided view, written instead of read).
#include <cstring>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/strided_copy.h"

namespace dlc::cpu {

void kernel_SliceGrad(KernelContext& ctx) {
  const TensorView& dy = ctx.inputs[0];
  const TensorView& dx = ctx.outputs[0];
  const Shape& starts = ctx.attrs.ints("starts");
  const Shape& axes = ctx.attrs.ints("axes");
  const Shape steps = ctx.attrs.ints("steps", Shape(starts.size(), 1));
  if (axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, axes and steps differ in length");
  if (dx.bytes()) std::memset(dx.data, 0, dx.bytes());
  if (dy.numel() == 0) return;
  Shape strides = row_major_strides(dx.dims);
  int64_t offset = 0;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axes[k], dim = dx.dims[size_t(axis)];
    const int64_t last = starts[k] + (dy.dims[size_t(axis)] - 1) * steps[k];
    if (starts[k] < 0 || starts[k] >= dim || last < 0 || last >= dim)
      ctx.fail("slice {}:{}:{} of axis {} leaves [0, {})", starts[k], last, steps[k], axis, dim);
    offset += starts[k] * strides[size_t(axis)];
    strides[size_t(axis)] *= steps[k];
  }
  auto* base = static_cast<uint8_t*>(dx.data) + offset * int64_t(dtype_size(dx.dtype));
  strided_copy(dx.dtype, dy.dims, base, strides, dy.data, row_major_strides(dy.dims));
}

}  // namespace dlc::cpu
