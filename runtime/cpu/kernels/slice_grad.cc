// CPU SliceGrad: the gradient of Slice, a zero tensor of the input's shape with dy copied to the
// sliced positions (the Slice's strided view, written instead of read).
#include <cstring>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/slice_view.h"
#include "runtime/cpu/strided_copy.h"

namespace dlc::cpu {

void kernel_SliceGrad(const KernelContext& ctx) {
  const TensorView& dy = ctx.inputs[0];
  const TensorView& dx = ctx.outputs[0];
  if (dx.bytes()) std::memset(dx.data, 0, dx.bytes());
  if (dy.numel() == 0) return;
  const SliceView view = slice_view(ctx, dx.dims, dy.dims);
  auto* base = static_cast<uint8_t*>(dx.data) + view.offset * int64_t(dtype_size(dx.dtype));
  strided_copy(dx.dtype, dy.dims, base, view.strides, dy.data, row_major_strides(dy.dims));
}

}  // namespace dlc::cpu
