// CPU kernels of the shape family.
#include <cstring>

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

void kernel_Identity(KernelContext& ctx) { std::memcpy(ctx.outputs[0].data, ctx.inputs[0].data, ctx.inputs[0].bytes()); }
void kernel_Reshape(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Transpose(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Expand(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Tile(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Slice(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Concat(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Split(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Pad(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Gather(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_GatherElements(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_GatherND(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Trilu(KernelContext& ctx) { ctx.fail("not implemented yet"); }

}  // namespace dlc::cpu
