// ONNX elementwise ops: most map one-to-one onto the IR op of the same name; Cast, Clip, Pow,
// the variadic Max/Min/Sum/Mean, Identity and Constant are translated here too.
#include "frontend/onnx_ops/translate_util.h"
#include "frontend/onnx_ops/translators.h"
#include "frontend/onnx_tensor.h"

namespace dlc::frontend {

// An op whose IR form has the ONNX name, inputs and attributes (minus the legacy `consumed_inputs`).
namespace {

// Before opset 7, a binary op's second operand (or PRelu's per-channel slope) lined up with the
// first starting at `axis` instead of at the trailing dimensions: reshape it so numpy
// broadcasting gives the same result.
ir::Value* align_at_axis(ImportContext& ctx, ir::Value* b, int64_t rank, int64_t axis) {
  const Shape& bs = b->type.shape;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis + int64_t(bs.size()) > rank)
    ctx.fail("legacy broadcast axis {} does not fit rank {}", axis, rank);
  Shape aligned = bs;
  aligned.resize(size_t(rank - axis), 1);
  if (aligned == bs) return b;
  return reshape(ctx, b, aligned);
}

}  // namespace

void translate_same_op(ImportContext& ctx) {
  const ir::OpKind op = same_named_op(ctx);
  std::vector<ir::Value*> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.has_input(i) ? ctx.input(i) : nullptr);
  const int64_t rank0 = inputs.empty() || !inputs[0] ? 0 : inputs[0]->type.rank();
  if (ctx.opset() < 7 && inputs.size() == 2 && inputs[1]) {
    if (ctx.attr_int("broadcast", 0) != 0 && ctx.has_attr("axis"))
      inputs[1] = align_at_axis(ctx, inputs[1], rank0, ctx.attr_int("axis", 0));
    else if (op == ir::OpKind::PRelu && inputs[1]->type.rank() == 1 && rank0 > 2 &&
             inputs[1]->type.shape[0] == inputs[0]->type.shape[1])
      inputs[1] = align_at_axis(ctx, inputs[1], rank0, 1);
  }
  Attrs attrs;
  for (const auto& a : ctx.node().attribute()) {
    const bool legacy_broadcast = ctx.opset() < 7 && ctx.has_attr("broadcast");
    if (a.name() == "consumed_inputs" ||
        (legacy_broadcast && (a.name() == "broadcast" || a.name() == "axis")))
      continue;
    switch (a.type()) {
      case onnx::AttributeProto::INT:
        attrs.set(a.name(), int64_t(a.i()));
        break;
      case onnx::AttributeProto::FLOAT:
        attrs.set(a.name(), double(a.f()));
        break;
      case onnx::AttributeProto::STRING:
        attrs.set(a.name(), a.s());
        break;
      case onnx::AttributeProto::INTS:
        attrs.set(a.name(), ctx.attr_ints(a.name()));
        break;
      case onnx::AttributeProto::FLOATS:
        attrs.set(a.name(), ctx.attr_floats(a.name()));
        break;
      default:
        ctx.fail("attribute '{}' has an unsupported type", a.name());
    }
  }
  ctx.set_output(0, ctx.emit(op, inputs, std::move(attrs)));
}

void translate_identity(ImportContext& ctx) { ctx.set_output(0, ctx.input(0)); }

void translate_cast(ImportContext& ctx) {
  ctx.set_output(0, cast_to(ctx, ctx.input(0), dtype_attr(ctx, "to")));
}

// A float base takes the exponent converted to its dtype; an integer base keeps a float exponent,
// which the kernel applies in double precision.
void translate_pow(ImportContext& ctx) {
  ir::Value* base = ctx.input(0);
  ir::Value* exponent = ctx.input(1);
  if (is_floating(base->type.dtype)) exponent = cast_to(ctx, exponent, base->type.dtype);
  ctx.set_output(0, ctx.emit(ir::OpKind::Pow, {base, exponent}));
}

// Clip(x, min?, max?); before opset 11 the bounds are the `min`/`max` attributes.
void translate_clip(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  std::vector<ir::Value*> inputs = {x, nullptr, nullptr};
  if (ctx.opset() < 11) {
    if (ctx.has_attr("min")) inputs[1] = ctx.scalar(x->type.dtype, ctx.attr_float("min", 0));
    if (ctx.has_attr("max")) inputs[2] = ctx.scalar(x->type.dtype, ctx.attr_float("max", 0));
  } else {
    for (int i = 1; i < 3; ++i)
      if (ctx.has_input(i)) inputs[i] = ctx.input(i);
  }
  while (inputs.size() > 1 && !inputs.back()) inputs.pop_back();
  ctx.set_output(0, ctx.emit(ir::OpKind::Clip, inputs));
}

// Max/Min/Sum/Mean(x0, x1, …): a left-to-right chain of binary ops (Mean divides the sum by n).
void translate_variadic(ImportContext& ctx) {
  const std::string& type = ctx.node().op_type();
  if (ctx.num_inputs() < 1) ctx.fail("expects at least one input");
  ir::OpKind op = type == "Max" ? ir::OpKind::Max : type == "Min" ? ir::OpKind::Min : ir::OpKind::Add;
  ir::Value* acc = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) acc = ctx.emit(op, {acc, ctx.input(i)});
  if (type == "Mean" && ctx.num_inputs() > 1)
    acc = ctx.emit(ir::OpKind::Div, {acc, ctx.scalar(acc->type.dtype, double(ctx.num_inputs()))});
  ctx.set_output(0, acc);
}

void translate_constant(ImportContext& ctx) {
  Tensor value;
  if (ctx.has_attr("value")) {
    value = ctx.attr_tensor("value");
  } else if (ctx.has_attr("value_float")) {
    value = Tensor::from_double(DType::F32, {ctx.attr_float("value_float", 0)}, {});
  } else if (ctx.has_attr("value_floats")) {
    std::vector<double> v = ctx.attr_floats("value_floats");
    value = Tensor::from_double(DType::F32, v, {int64_t(v.size())});
  } else if (ctx.has_attr("value_int")) {
    value = Tensor::from_int64({ctx.attr_int("value_int", 0)}, {});
  } else if (ctx.has_attr("value_ints")) {
    std::vector<int64_t> v = ctx.attr_ints("value_ints");
    value = Tensor::from_int64(v, {int64_t(v.size())});
  } else if (ctx.has_attr("value_string") || ctx.has_attr("value_strings")) {
    ctx.fail("string constants are not supported (dlc has no string dtype)");
  } else if (ctx.has_attr("sparse_value")) {
    ctx.fail("sparse constants ('sparse_value') are not supported");
  } else {
    ctx.fail("needs one of the attributes value, value_float(s), value_int(s)");
  }
  ctx.set_output(0, ctx.constant(std::move(value), ctx.node().output(0)));
}

}  // namespace dlc::frontend
