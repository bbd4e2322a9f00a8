// CPU kernels of the reduction family.
#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

void kernel_ReduceL1(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceL2(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceLogSum(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceLogSumExp(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceMax(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceMean(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceMin(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceProd(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceSum(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ReduceSumSquare(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ArgMax(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ArgMin(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_CumSum(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Softmax(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_LogSoftmax(KernelContext& ctx) { ctx.fail("not implemented yet"); }

}  // namespace dlc::cpu
