// CPU kernels of the nn family.
#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

void kernel_MatMul(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Einsum(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Conv(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ConvTranspose(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_AveragePool(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_MaxPool(KernelContext& ctx) { ctx.fail("not implemented yet"); }

}  // namespace dlc::cpu
