// Helpers the ONNX op translators share (translate_util.h).
#include "frontend/onnx_ops/translate_util.h"

#include "frontend/onnx_tensor.h"

namespace dlc::frontend {

ir::OpKind same_named_op(const ImportContext& ctx) {
  auto op = ir::parse_op(ctx.node().op_type());
  if (!op) ctx.fail("no IR op of this name");
  return *op;
}

int64_t resolve_axis(const ImportContext& ctx, int64_t axis, int64_t rank, bool inclusive) {
  const int64_t hi = inclusive ? rank : rank - 1;
  if (axis < -rank || axis > hi) ctx.fail("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

ir::Value* reshape(ImportContext& ctx, ir::Value* v, const Shape& shape) {
  Attrs attrs;
  attrs.set("shape", shape);
  return ctx.emit(ir::OpKind::Reshape, {v}, std::move(attrs));
}

ir::Value* transpose(ImportContext& ctx, ir::Value* v, const Shape& perm) {
  Attrs attrs;
  attrs.set("perm", perm);
  return ctx.emit(ir::OpKind::Transpose, {v}, std::move(attrs));
}

DType dtype_attr(const ImportContext& ctx, const std::string& name) {
  if (!ctx.has_attr(name)) ctx.fail("attribute '{}' is required", name);
  const int64_t onnx_type = ctx.attr_int(name, 0);
  auto t = dtype_from_onnx(int32_t(onnx_type));
  if (!t)
    ctx.fail("type {} ({}) of attribute '{}' is not supported",
             onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(onnx_type)), onnx_type, name);
  return *t;
}

ir::Value* cast_to(ImportContext& ctx, ir::Value* v, DType to) {
  if (v->type.dtype == to) return v;
  Attrs attrs;
  attrs.set("to", std::string(dtype_name(to)));
  return ctx.emit(ir::OpKind::Cast, {v}, std::move(attrs));
}

ir::Value* along_softmax_axis(ImportContext& ctx,
                              const std::function<ir::Value*(ir::Value* x, int64_t axis)>& op_along) {
  const Shape dims = ctx.input_type(0).shape;
  const int64_t rank = int64_t(dims.size());
  const bool coerced = ctx.opset() < 13;
  const int64_t axis = resolve_axis(ctx, ctx.attr_int("axis", coerced ? 1 : -1), rank);
  if (!coerced || axis == rank - 1) return op_along(ctx.input(0), axis);
  const Shape flat = {product(dims.begin(), dims.begin() + axis), product(dims.begin() + axis, dims.end())};
  return reshape(ctx, op_along(reshape(ctx, ctx.input(0), flat), 1), dims);
}

ir::Value* binary(ImportContext& ctx, ir::OpKind op, ir::Value* a, ir::Value* b) {
  return ctx.emit(op, {a, b});
}

ir::Value* slice(ImportContext& ctx, ir::Value* v, int64_t axis, int64_t start, int64_t end) {
  Attrs a;
  a.set("starts", Shape{start});
  a.set("ends", Shape{end});
  a.set("axes", Shape{axis});
  a.set("steps", Shape{1});
  return ctx.emit(ir::OpKind::Slice, {v}, std::move(a));
}

ir::Value* filled(ImportContext& ctx, DType dtype, const Shape& shape, double value,
                  const std::string& hint) {
  return ctx.constant(
      Tensor::from_double(dtype, std::vector<double>(size_t(num_elements(shape)), value), shape), hint);
}

ir::Value* from_end(ImportContext& ctx, ir::Value* i, int64_t extent) {
  ir::Value* wrapped = binary(ctx, ir::OpKind::Add, i, ctx.scalar(DType::I64, double(extent)));
  return ctx.emit(ir::OpKind::Where,
                  {binary(ctx, ir::OpKind::Less, i, ctx.scalar(DType::I64, 0)), wrapped, i});
}

int64_t product(Shape::const_iterator begin, Shape::const_iterator end) {
  int64_t n = 1;
  for (auto it = begin; it != end; ++it) n *= *it;
  return n;
}

}  // namespace dlc::frontend
