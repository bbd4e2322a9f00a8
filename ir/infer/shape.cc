// Shape inference of the shape family.
#include "ir/infer.h"

namespace dlc::ir {

void infer_Identity(InferContext& ctx) { ctx.outputs[0] = ctx.input(0); }
void infer_Reshape(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Transpose(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Expand(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Tile(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Slice(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Concat(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Split(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Pad(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Gather(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_GatherElements(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_GatherND(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }
void infer_Trilu(InferContext& ctx) { ctx.fail("shape inference not implemented yet"); }

}  // namespace dlc::ir
