// Shape inference of the norm family.
#include "ir/infer.h"

namespace dlc::ir {

void infer_BatchNormalization(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_InstanceNormalization(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_LayerNormalization(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Dropout(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_NegativeLogLikelihoodLoss(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_SoftmaxCrossEntropyLoss(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }

}  // namespace dlc::ir
