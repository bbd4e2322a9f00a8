// ONNX data-movement ops. Shape-like operands (attributes in old opsets, inputs in new ones) are
// resolved at import into the IR attributes of ir/ops/shape.def; Flatten/Squeeze/Unsqueeze become
// Reshape; Shape, Size, ConstantOfShape and Range become constants.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "frontend/onnx_ops/translate_util.h"
#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {

// An integer list that is attribute `name` before `since_opset` and input `input` from it on;
// nullopt when absent.
std::optional<Shape> ints_operand(ImportContext& ctx, int64_t since_opset, const std::string& name,
                                  int input) {
  if (ctx.opset() >= since_opset) {
    if (!ctx.has_input(input)) return std::nullopt;
    return ctx.required_constant(input, name.c_str()).as_int64();
  }
  if (!ctx.has_attr(name)) return std::nullopt;
  return ctx.attr_ints(name);
}

void emit_reshape(ImportContext& ctx, const Shape& shape) {
  ctx.set_output(0, reshape(ctx, ctx.input(0), shape));
}

// Numpy clamping of a slice bound against `dim` for the sign of `step`.
int64_t clamp_bound(int64_t v, int64_t dim, int64_t step) {
  if (v < 0) v += dim;
  if (v < 0) return step < 0 ? -1 : 0;
  if (v >= dim) return step < 0 ? dim - 1 : dim;
  return v;
}

}  // namespace

void translate_reshape(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  Shape shape = ctx.opset() < 5 ? ctx.attr_ints("shape") : ctx.required_constant(1, "shape").as_int64();
  const bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  int64_t infer_at = -1, known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (i >= in.size())
        ctx.fail("shape {} copies dim {} of {}, which has none", shape_str(shape), i, shape_str(in));
      shape[i] = in[i];
    }
    if (shape[i] == -1) {
      if (infer_at >= 0) ctx.fail("shape {} has more than one -1", shape_str(shape));
      infer_at = int64_t(i);
    } else if (shape[i] < 0) {
      ctx.fail("shape {} has an invalid dim {}", shape_str(shape), shape[i]);
    } else {
      known *= shape[i];
    }
  }
  const int64_t numel = num_elements(in);
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      ctx.fail("cannot reshape {} to {}", shape_str(in), shape_str(shape));
    shape[infer_at] = numel / known;
  }
  emit_reshape(ctx, shape);
}

void translate_flatten(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const int64_t axis = resolve_axis(ctx, ctx.attr_int("axis", 1), int64_t(in.size()), true);
  emit_reshape(ctx, {product(in.begin(), in.begin() + axis), product(in.begin() + axis, in.end())});
}

void translate_squeeze(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const int64_t rank = int64_t(in.size());
  std::optional<Shape> axes = ints_operand(ctx, 13, "axes", 1);
  std::vector<bool> drop(in.size(), false);
  if (axes) {
    for (int64_t a : *axes) {
      a = resolve_axis(ctx, a, rank);
      if (in[a] != 1) ctx.fail("cannot squeeze axis {} of size {} in {}", a, in[a], shape_str(in));
      drop[a] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) drop[d] = in[d] == 1;
  }
  Shape out;
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d]) out.push_back(in[d]);
  emit_reshape(ctx, out);
}

void translate_unsqueeze(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  std::optional<Shape> axes = ints_operand(ctx, 13, "axes", 1);
  if (!axes) ctx.fail("axes are required");
  const int64_t rank = int64_t(in.size() + axes->size());
  std::vector<bool> inserted(size_t(rank), false);
  for (int64_t a : *axes) {
    a = resolve_axis(ctx, a, rank);
    if (inserted[a]) ctx.fail("axis {} is repeated", a);
    inserted[a] = true;
  }
  Shape out;
  auto next = in.begin();
  for (int64_t d = 0; d < rank; ++d) out.push_back(inserted[d] ? 1 : *next++);
  emit_reshape(ctx, out);
}

void translate_shape(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const int64_t rank = int64_t(in.size());
  auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(ctx.attr_int("start", 0)),
                end = std::max(start, clamp(ctx.attr_int("end", rank)));
  Shape dims(in.begin() + start, in.begin() + end);
  ctx.set_output(0, ctx.constant(Tensor::from_int64(dims, {int64_t(dims.size())})));
}

void translate_size(ImportContext& ctx) {
  ctx.set_output(0, ctx.constant(Tensor::from_int64({ctx.input_type(0).numel()}, {})));
}

void translate_constant_of_shape(ImportContext& ctx) {
  Shape shape = ctx.required_constant(0, "shape").as_int64();
  for (int64_t d : shape)
    if (d < 0) ctx.fail("shape {} has a negative dim", shape_str(shape));
  Tensor value = ctx.has_attr("value") ? ctx.attr_tensor("value") : Tensor::scalar_f32(0.0f);
  if (value.type.numel() != 1) ctx.fail("value must have one element, got {}", value.type.str());
  Tensor out(TensorType{value.type.dtype, shape});
  const size_t esize = dtype_size(value.type.dtype);
  for (int64_t i = 0; i < out.type.numel(); ++i)
    std::memcpy(out.bytes.data() + size_t(i) * esize, value.bytes.data(), esize);
  ctx.set_output(0, ctx.constant(std::move(out)));
}

void translate_range(ImportContext& ctx) {
  const Tensor& start = ctx.required_constant(0, "start");
  const Tensor& limit = ctx.required_constant(1, "limit");
  const Tensor& delta = ctx.required_constant(2, "delta");
  const DType dtype = start.type.dtype;
  if (limit.type.dtype != dtype || delta.type.dtype != dtype || start.type.numel() != 1 ||
      limit.type.numel() != 1 || delta.type.numel() != 1)
    ctx.fail("start, limit and delta must be scalars of one dtype, got {}, {}, {}", start.type.str(),
             limit.type.str(), delta.type.str());
  if (is_floating(dtype)) {
    const double s = start.as_double()[0], l = limit.as_double()[0], d = delta.as_double()[0];
    if (d == 0) ctx.fail("delta must be non-zero");
    const int64_t n = std::max<int64_t>(int64_t(std::ceil((l - s) / d)), 0);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = s + double(i) * d;
    ctx.set_output(0, ctx.constant(Tensor::from_double(dtype, v, {n})));
    return;
  }
  const int64_t s = start.as_int64()[0], l = limit.as_int64()[0], d = delta.as_int64()[0];
  if (d == 0) ctx.fail("delta must be non-zero");
  const int64_t span = l - s;
  const int64_t n = std::max<int64_t>(span / d + (span % d != 0 && (span < 0) == (d < 0) ? 1 : 0), 0);
  Tensor out(TensorType{dtype, {n}});
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = s + i * d;
    switch (dtype) {
      case DType::I64:
        out.data<int64_t>()[i] = v;
        break;
      case DType::I32:
        out.data<int32_t>()[i] = int32_t(v);
        break;
      case DType::I8:
        out.data<int8_t>()[i] = int8_t(v);
        break;
      case DType::U8:
        out.data<uint8_t>()[i] = uint8_t(v);
        break;
      default:
        ctx.fail("unsupported dtype {}", dtype_name(dtype));
    }
  }
  ctx.set_output(0, ctx.constant(std::move(out)));
}

void translate_expand(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const Shape shape = ctx.required_constant(1, "shape").as_int64();
  const size_t rank = std::max(in.size(), shape.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i < rank - in.size() ? 1 : in[i - (rank - in.size())];
    const int64_t b = i < rank - shape.size() ? 1 : shape[i - (rank - shape.size())];
    if (a != b && a != 1 && b != 1)
      ctx.fail("{} does not broadcast with shape {}", shape_str(in), shape_str(shape));
    out[i] = a == 1 ? b : a;
  }
  if (out == in) return ctx.set_output(0, ctx.input(0));
  Attrs a;
  a.set("shape", out);
  ctx.set_output(0, ctx.emit(ir::OpKind::Expand, {ctx.input(0)}, std::move(a)));
}

void translate_tile(ImportContext& ctx) {
  Attrs a;
  a.set("repeats", ctx.required_constant(1, "repeats").as_int64());
  ctx.set_output(0, ctx.emit(ir::OpKind::Tile, {ctx.input(0)}, std::move(a)));
}

void translate_slice(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const int64_t rank = int64_t(in.size());
  std::optional<Shape> starts = ints_operand(ctx, 10, "starts", 1);
  std::optional<Shape> ends = ints_operand(ctx, 10, "ends", 2);
  if (!starts || !ends) ctx.fail("starts and ends are required");
  const size_t n = starts->size();
  Shape axes = ints_operand(ctx, 10, "axes", 3).value_or(Shape{});
  if (axes.empty())
    for (size_t k = 0; k < n; ++k) axes.push_back(int64_t(k));
  Shape steps = ctx.opset() >= 10 ? ints_operand(ctx, 10, "steps", 4).value_or(Shape(n, 1)) : Shape(n, 1);
  if (ends->size() != n || axes.size() != n || steps.size() != n)
    ctx.fail("starts, ends, axes and steps differ in length");
  for (size_t k = 0; k < n; ++k) {
    axes[k] = resolve_axis(ctx, axes[k], rank);
    if (steps[k] == 0) ctx.fail("steps must be non-zero");
    (*starts)[k] = clamp_bound((*starts)[k], in[axes[k]], steps[k]);
    (*ends)[k] = clamp_bound((*ends)[k], in[axes[k]], steps[k]);
  }
  Attrs a;
  a.set("starts", *starts);
  a.set("ends", *ends);
  a.set("axes", axes);
  a.set("steps", steps);
  ctx.set_output(0, ctx.emit(ir::OpKind::Slice, {ctx.input(0)}, std::move(a)));
}

void translate_concat(ImportContext& ctx) {
  std::vector<ir::Value*> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  const int64_t rank = ctx.input_type(0).rank();
  Attrs a;
  a.set("axis", resolve_axis(ctx, ctx.attr_int("axis", 1), rank));
  ctx.set_output(0, ctx.emit(ir::OpKind::Concat, std::move(inputs), std::move(a)));
}

void translate_split(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const int64_t axis = resolve_axis(ctx, ctx.attr_int("axis", 0), int64_t(in.size()));
  const int64_t dim = in[axis];
  Shape split = ints_operand(ctx, 13, "split", 1).value_or(Shape{});
  if (split.empty()) {
    const int64_t parts = ctx.opset() >= 18 && ctx.has_attr("num_outputs") ? ctx.attr_int("num_outputs", 0)
                                                                           : int64_t(ctx.num_outputs());
    if (parts <= 0) ctx.fail("cannot split into {} parts", parts);
    const bool uneven = ctx.opset() >= 18 && ctx.has_attr("num_outputs");
    if (!uneven && dim % parts != 0)
      ctx.fail("axis {} of size {} does not split into {} equal parts", axis, dim, parts);
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k) split.push_back(std::clamp<int64_t>(dim - k * chunk, 0, chunk));
  }
  std::vector<bool> want;
  for (size_t k = 0; k < split.size(); ++k) want.push_back(ctx.has_output(int(k)));
  Attrs a;
  a.set("axis", axis);
  a.set("split", split);
  std::vector<ir::Value*> outs = ctx.emit_multi(ir::OpKind::Split, {ctx.input(0)}, std::move(a), want);
  for (size_t k = 0; k < outs.size(); ++k)
    if (outs[k]) ctx.set_output(int(k), outs[k]);
}

void translate_pad(ImportContext& ctx) {
  const int64_t rank = ctx.input_type(0).rank();
  Shape pads;
  double value = 0.0;
  if (ctx.opset() < 11) {
    pads = ctx.attr_ints(ctx.has_attr("paddings") ? "paddings" : "pads");
    value = ctx.attr_float("value", 0.0);
  } else {
    Shape given = ctx.required_constant(1, "pads").as_int64();
    if (ctx.has_input(2)) {
      const Tensor& v = ctx.required_constant(2, "constant_value");
      if (v.type.numel() > 0) value = v.as_double()[0];
    }
    std::optional<Shape> axes = ints_operand(ctx, 18, "axes", 3);
    if (!axes) {
      pads = given;
    } else {
      if (given.size() != 2 * axes->size())
        ctx.fail("pads {} do not match axes {}", shape_str(given), shape_str(*axes));
      pads.assign(size_t(2 * rank), 0);
      for (size_t k = 0; k < axes->size(); ++k) {
        const int64_t axis = resolve_axis(ctx, (*axes)[k], rank);
        pads[axis] = given[k];
        pads[axis + rank] = given[k + axes->size()];
      }
    }
  }
  if (int64_t(pads.size()) != 2 * rank) ctx.fail("pads {} must have 2 x {} entries", shape_str(pads), rank);
  Attrs a;
  a.set("pads", pads);
  a.set("mode", ctx.attr_string("mode", "constant"));
  a.set("value", value);
  ctx.set_output(0, ctx.emit(ir::OpKind::Pad, {ctx.input(0)}, std::move(a)));
}

void translate_trilu(ImportContext& ctx) {
  int64_t k = 0;
  if (ctx.has_input(1)) {
    const Tensor& t = ctx.required_constant(1, "k");
    if (t.type.numel() != 1) ctx.fail("k must be a scalar, got {}", t.type.str());
    k = t.as_int64()[0];
  }
  Attrs a;
  a.set("upper", ctx.attr_int("upper", 1));
  a.set("k", k);
  ctx.set_output(0, ctx.emit(ir::OpKind::Trilu, {ctx.input(0)}, std::move(a)));
}

}  // namespace dlc::frontend
