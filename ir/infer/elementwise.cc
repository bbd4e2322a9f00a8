// Shape inference of elementwise ops: unary ops keep their input type, binary ops broadcast,
// comparisons and logic give bool.
#include "ir/infer.h"

namespace dlc::ir {

namespace {

void same_as_input(InferContext& ctx) { ctx.outputs[0] = ctx.input(0); }

void float_unary(InferContext& ctx) {
  if (!is_floating(ctx.input(0).dtype))
    ctx.fail("expects a floating-point input, got {}", ctx.input(0).str());
  same_as_input(ctx);
}

// Numeric binary op: both operands of one dtype, numpy broadcasting.
void binary(InferContext& ctx) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  if (a.dtype != b.dtype) ctx.fail("operand dtypes differ: {} and {}", a.str(), b.str());
  ctx.outputs[0] = TensorType{a.dtype, broadcast_shapes(ctx, a.shape, b.shape)};
}

void compare(InferContext& ctx) {
  binary(ctx);
  ctx.outputs[0].dtype = DType::Bool;
}

void logical(InferContext& ctx) {
  if (ctx.input(0).dtype != DType::Bool || ctx.input(1).dtype != DType::Bool)
    ctx.fail("expects bool operands, got {} and {}", ctx.input(0).str(), ctx.input(1).str());
  binary(ctx);
}

}  // namespace

#define DLC_FLOAT_UNARY(op) \
  void infer_##op(InferContext& ctx) { float_unary(ctx); }
DLC_FLOAT_UNARY(Acos)
DLC_FLOAT_UNARY(Acosh)
DLC_FLOAT_UNARY(Asin)
DLC_FLOAT_UNARY(Asinh)
DLC_FLOAT_UNARY(Atan)
DLC_FLOAT_UNARY(Atanh)
DLC_FLOAT_UNARY(Ceil)
DLC_FLOAT_UNARY(Celu)
DLC_FLOAT_UNARY(Cos)
DLC_FLOAT_UNARY(Cosh)
DLC_FLOAT_UNARY(Elu)
DLC_FLOAT_UNARY(Erf)
DLC_FLOAT_UNARY(Exp)
DLC_FLOAT_UNARY(Floor)
DLC_FLOAT_UNARY(HardSigmoid)
DLC_FLOAT_UNARY(HardSwish)
DLC_FLOAT_UNARY(LeakyRelu)
DLC_FLOAT_UNARY(Log)
DLC_FLOAT_UNARY(Mish)
DLC_FLOAT_UNARY(Reciprocal)
DLC_FLOAT_UNARY(Round)
DLC_FLOAT_UNARY(Selu)
DLC_FLOAT_UNARY(Sigmoid)
DLC_FLOAT_UNARY(Sin)
DLC_FLOAT_UNARY(Sinh)
DLC_FLOAT_UNARY(Softplus)
DLC_FLOAT_UNARY(Softsign)
DLC_FLOAT_UNARY(Sqrt)
DLC_FLOAT_UNARY(Tan)
DLC_FLOAT_UNARY(Tanh)
DLC_FLOAT_UNARY(ThresholdedRelu)
#undef DLC_FLOAT_UNARY

void infer_Abs(InferContext& ctx) { same_as_input(ctx); }
void infer_Neg(InferContext& ctx) { same_as_input(ctx); }
void infer_Relu(InferContext& ctx) { same_as_input(ctx); }
void infer_Sign(InferContext& ctx) { same_as_input(ctx); }

void infer_Not(InferContext& ctx) {
  if (ctx.input(0).dtype != DType::Bool) ctx.fail("expects bool, got {}", ctx.input(0).str());
  same_as_input(ctx);
}

void infer_Cast(InferContext& ctx) {
  auto to = parse_dtype(ctx.attrs().s("to"));
  if (!to) ctx.fail("unknown target dtype '{}'", ctx.attrs().s("to"));
  ctx.outputs[0] = TensorType{*to, ctx.input(0).shape};
}

void infer_Clip(InferContext& ctx) {
  for (int i = 1; i < 3; ++i)
    if (ctx.has_input(i) && (ctx.input(i).numel() != 1 || ctx.input(i).dtype != ctx.input(0).dtype))
      ctx.fail("bound {} must be a scalar of the input's dtype, got {}", i, ctx.input(i).str());
  same_as_input(ctx);
}

void infer_Add(InferContext& ctx) { binary(ctx); }
void infer_Sub(InferContext& ctx) { binary(ctx); }
void infer_Mul(InferContext& ctx) { binary(ctx); }
void infer_Div(InferContext& ctx) { binary(ctx); }
void infer_Mod(InferContext& ctx) { binary(ctx); }
void infer_Max(InferContext& ctx) { binary(ctx); }
void infer_Min(InferContext& ctx) { binary(ctx); }
void infer_PRelu(InferContext& ctx) { binary(ctx); }

void infer_Pow(InferContext& ctx) {
  // ONNX allows a different exponent dtype; the result has the base's dtype.
  ctx.outputs[0] =
      TensorType{ctx.input(0).dtype, broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape)};
}

void infer_And(InferContext& ctx) { logical(ctx); }
void infer_Or(InferContext& ctx) { logical(ctx); }
void infer_Xor(InferContext& ctx) { logical(ctx); }
void infer_Equal(InferContext& ctx) { compare(ctx); }
void infer_Greater(InferContext& ctx) { compare(ctx); }
void infer_GreaterOrEqual(InferContext& ctx) { compare(ctx); }
void infer_Less(InferContext& ctx) { compare(ctx); }
void infer_LessOrEqual(InferContext& ctx) { compare(ctx); }

void infer_Where(InferContext& ctx) {
  if (ctx.input(0).dtype != DType::Bool) ctx.fail("condition must be bool, got {}", ctx.input(0).str());
  if (ctx.input(1).dtype != ctx.input(2).dtype)
    ctx.fail("branch dtypes differ: {} and {}", ctx.input(1).str(), ctx.input(2).str());
  Shape s = broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape);
  ctx.outputs[0] = TensorType{ctx.input(1).dtype, broadcast_shapes(ctx, s, ctx.input(2).shape)};
}

}  // namespace dlc::ir
