// Channels-first copies around a kernel for channels-last steps (channels_first.h).
#include "runtime/cpu/channels_first.h"

#include <cstddef>
#include <vector>

#include "dlc/channels_last.h"
#include "runtime/cpu/strided_copy.h"

namespace dlc::cpu {

bool run_channels_first(const KernelContext& ctx, KernelFn kernel) {
  if (!is_channels_last(ctx.attrs)) return false;
  Attrs attrs = ctx.attrs;
  attrs.erase("channels_last");
  KernelContext first{attrs, ctx.inputs, ctx.outputs, ctx.state, ctx.step_name, ctx.kernel_name};
  std::vector<std::vector<std::byte>> copies(ctx.inputs.size() + ctx.outputs.size());
  // Points `v` (a present operand of rank 3 or more) at a channels-first buffer of its own.
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
      transposed_copy(v.dtype, v.dims, v.data, to_channels_first_perm(v.dims.size()), first.inputs[i].data);
  }
  std::vector<bool> retargeted(ctx.outputs.size());
  for (size_t i = 0; i < ctx.outputs.size(); ++i)
    retargeted[i] = retarget(first.outputs[i], copies[ctx.inputs.size() + i]);
  kernel(first);
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    const TensorView& v = first.outputs[i];
    if (retargeted[i])
      transposed_copy(v.dtype, v.dims, v.data, to_channels_last_perm(v.dims.size()), ctx.outputs[i].data);
  }
  return true;
}

}  // namespace dlc::cpu
