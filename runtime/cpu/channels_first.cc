// Channels-first copies around a kernel for channels-last steps (channels_first.h).
#include "runtime/cpu/channels_first.h"

#include <cstddef>
#include <vector>

#include "dlc/channels_last.h"
#include "runtime/cpu/strided_copy.h"

namespace dlc::cpu {

namespace {

// Copies `in` (dims `in_dims`) to `out` transposed by `perm`: out's dim i is in's dim perm[i].
void transpose(DType dtype, const Shape& in_dims, const void* in, const Shape& perm, void* out) {
  const Shape in_strides = row_major_strides(in_dims);
  Shape gathered;
  for (int64_t p : perm) gathered.push_back(in_strides[size_t(p)]);
  const Shape out_dims = permuted(in_dims, perm);
  strided_copy(dtype, out_dims, out, row_major_strides(out_dims), in, gathered);
}

}  // namespace

bool run_channels_first(KernelContext& ctx, KernelFn kernel) {
  if (!is_channels_last(ctx.attrs)) return false;
  Attrs attrs = ctx.attrs;
  attrs.erase("channels_last");
  KernelContext first{attrs, ctx.inputs, ctx.outputs, ctx.state, ctx.step_name, ctx.kernel_name};
  std::vector<std::vector<std::byte>> copies(ctx.inputs.size() + ctx.outputs.size());
  auto retarget = [&](TensorView& v, std::vector<std::byte>& storage) {
    if (!v.data || !has_channel_layout(v.dims.size())) return false;
    v.dims = channels_first_dims(v.dims);
    storage.resize(v.bytes());
    v.data = storage.data();
    return true;
  };
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const TensorView& v = ctx.inputs[i];
    if (retarget(first.inputs[i], copies[i]))
      transpose(v.dtype, v.dims, v.data, to_channels_first_perm(v.dims.size()), first.inputs[i].data);
  }
  for (size_t i = 0; i < ctx.outputs.size(); ++i) retarget(first.outputs[i], copies[ctx.inputs.size() + i]);
  kernel(first);
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    const TensorView& v = first.outputs[i];
    if (v.data && has_channel_layout(v.dims.size()) && v.data != ctx.outputs[i].data)
      transpose(v.dtype, v.dims, v.data, to_channels_last_perm(v.dims.size()), ctx.outputs[i].data);
  }
  return true;
}

}  // namespace dlc::cpu
