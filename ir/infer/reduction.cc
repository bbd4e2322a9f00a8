// Shape inference of the reduction family.
#include "ir/infer.h"

namespace dlc::ir {

void infer_ReduceL1(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceL2(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceLogSum(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceLogSumExp(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceMax(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceMean(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceMin(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceProd(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceSum(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ReduceSumSquare(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ArgMax(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_ArgMin(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_CumSum(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Softmax(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_LogSoftmax(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }

}  // namespace dlc::ir
