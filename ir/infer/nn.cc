// Shape inference of the nn family.
#include "ir/infer.h"

namespace dlc::ir {

void infer_MatMul(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Einsum(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Conv(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ConvTranspose(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_AveragePool(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_MaxPool(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }

}  // namespace dlc::ir
