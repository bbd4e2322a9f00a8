// CPU kernels of the norm family.
#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

void kernel_BatchNormalization(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_InstanceNormalization(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_LayerNormalization(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Dropout(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_NegativeLogLikelihoodLoss(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_SoftmaxCrossEntropyLoss(KernelContext& ctx) { ctx.fail("not implemented yet"); }

}  // namespace dlc::cpu
