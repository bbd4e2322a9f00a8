// ONNX ops imported as compositions of IR ops, so they train, and run on CUDA, through the core
// ops' gradient rules and kernels:
// - DepthToSpace/SpaceToDepth: Reshape, Transpose, Reshape;
// - OneHot and Hardmax: Equal against an index range; EyeLike: a constant;
// - Shrink, IsNaN and IsInf: comparisons and Where;
// - MeanVarianceNormalization: ReduceMean; LRN: an AveragePool across channels;
// - ScatterElements: a GatherElementsGrad scatter-add; GatherND and ScatterND: Gather and
//   GatherGrad along the indexed dims flattened; MaxUnpool: a GatherGrad;
// - ReverseSequence: a GatherElements; TopK: the values a GatherElements at TopKIndices (an IR op
//   of its own, with CPU and CUDA kernels);
// - CastLike: Cast; If with a compile-time condition: the branch taken, inlined.
#include <cmath>
#include <functional>
#include <limits>

#include "dlc/checked_shape.h"
#include "frontend/onnx_ops/translate_util.h"
#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {

// [N, C, H, W] input of a block rearrangement, and its block size.
struct Blocks {
  int64_t n, c, h, w, b;
};

Blocks blocks_of(ImportContext& ctx) {
  const Shape& s = ctx.input_type(0).shape;
  if (s.size() != 4) ctx.fail("expects an input of rank 4 (N, C, H, W), got {}", ctx.input_type(0).str());
  const int64_t b = ctx.attr_int("blocksize", 0);
  if (b <= 0) ctx.fail("attribute 'blocksize' must be positive, got {}", b);
  return {s[0], s[1], s[2], s[3], b};
}

// An i64 index range [0, extent) along `axis` of a rank-`rank` shape of ones.
ir::Value* index_range(ImportContext& ctx, int64_t extent, int64_t axis, int64_t rank) {
  std::vector<int64_t> values(static_cast<size_t>(extent));
  for (int64_t i = 0; i < extent; ++i) values[size_t(i)] = i;
  Shape shape(size_t(rank), 1);
  shape[size_t(axis)] = extent;
  return ctx.constant(Tensor::from_int64(values, shape), "index_range");
}

// The positions GatherND and ScatterND index, as one linear index into the data flattened to
// [positions, slab dims...]: for batch p and index tuple (i_0 .. i_k-1), p * prod(extents) +
// sum of i_j * stride_j, each i_j counted from the end when negative.
struct FlatIndex {
  ir::Value* index;  // i64, the indices' shape without its last dimension
  Shape flat;        // the data's flattened shape
};

FlatIndex flat_index(ImportContext& ctx, const Shape& data, ir::Value* indices, int64_t batch_dims) {
  const Shape& is = indices->type.shape;
  if (is.empty()) ctx.fail("indices must have rank >= 1");
  const int64_t k = is.back(), b = batch_dims, rank = int64_t(is.size());
  if (b < 0 || b >= rank || b + k > int64_t(data.size()))
    ctx.fail("batch_dims {} with indices {} do not fit data {}", b, shape_str(is), shape_str(data));
  for (int64_t d = 0; d < b; ++d)
    if (is[size_t(d)] != data[size_t(d)])
      ctx.fail("batch dims of indices {} and data {} differ", shape_str(is), shape_str(data));
  const Shape tuples(is.begin(), is.end() - 1);
  ir::Value* idx = cast_to(ctx, indices, DType::I64);
  ir::Value* linear = nullptr;
  int64_t stride = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    const int64_t extent = data[size_t(b + j)];
    ir::Value* i = from_end(ctx, reshape(ctx, slice(ctx, idx, rank - 1, j, j + 1), tuples), extent);
    if (stride != 1) i = binary(ctx, ir::OpKind::Mul, i, ctx.scalar(DType::I64, double(stride)));
    linear = linear ? binary(ctx, ir::OpKind::Add, linear, i) : i;
    stride *= extent;
  }
  // Batch p starts at p * stride: a constant over the batch dims, broadcast over the tuples'.
  const int64_t batches = product(data.begin(), data.begin() + b);
  if (b > 0 || !linear) {
    std::vector<int64_t> starts(static_cast<size_t>(batches));
    for (int64_t p = 0; p < batches; ++p) starts[size_t(p)] = p * stride;
    Shape start_shape(tuples.size(), 1);
    std::copy(is.begin(), is.begin() + b, start_shape.begin());
    ir::Value* start = ctx.constant(Tensor::from_int64(starts, start_shape), "batch_start");
    linear = linear ? binary(ctx, ir::OpKind::Add, linear, start) : start;
  }
  Shape flat = {batches * stride};
  flat.insert(flat.end(), data.begin() + b + k, data.end());
  return {linear, flat};
}

// Input 2 (the updates) scattered into input 0 (the data): `scatter(v)` adds v's elements at
// their indices into zeros of the data's shape. Reduction "add" adds the scattered updates to the
// data; "none" takes them where an index points and the data elsewhere (duplicate indices, which
// ONNX leaves undefined there, sum). Reduction mul/max/min and integer data are refused.
void emit_scatter(ImportContext& ctx, const std::function<ir::Value*(ir::Value*)>& scatter) {
  ir::Value* data = ctx.input(0);
  const TensorType& u = ctx.input_type(2);
  const std::string reduction = ctx.attr_string("reduction", "none");
  if (reduction != "none" && reduction != "add")
    ctx.fail("reduction '{}' is not supported (none, add)", reduction);
  if (!is_floating(data->type.dtype)) ctx.fail("data must be floating point, got {}", data->type.str());
  ir::Value* scattered = scatter(ctx.input(2));
  if (reduction == "add") {
    ctx.set_output(0, binary(ctx, ir::OpKind::Add, data, scattered));
    return;
  }
  ir::Value* ones = filled(ctx, u.dtype, u.shape, 1.0, "ones");
  ir::Value* covered = binary(ctx, ir::OpKind::Greater, scatter(ones), ctx.scalar(u.dtype, 0.0));
  ctx.set_output(0, ctx.emit(ir::OpKind::Where, {covered, scattered, data}));
}

}  // namespace

// GatherND: a Gather along the flattened positions, which trains (GatherGrad) and runs on CUDA.
void translate_gather_nd(ImportContext& ctx) {
  ir::Value* data = ctx.input(0);
  const FlatIndex f = flat_index(ctx, data->type.shape, ctx.input(1), ctx.attr_int("batch_dims", 0));
  Attrs a;
  a.set("axis", int64_t(0));
  ctx.set_output(0, ctx.emit(ir::OpKind::Gather, {reshape(ctx, data, f.flat), f.index}, std::move(a)));
}

// ScatterND: a scatter (emit_scatter) by GatherGrad into the flattened data.
void translate_scatter_nd(ImportContext& ctx) {
  const Shape& ds = ctx.input_type(0).shape;
  const FlatIndex f = flat_index(ctx, ds, ctx.input(1), 0);
  Shape want = ctx.input_type(1).shape;
  want.pop_back();
  want.insert(want.end(), ds.begin() + int64_t(ds.size()) - int64_t(f.flat.size()) + 1, ds.end());
  if (ctx.input_type(2).shape != want)
    ctx.fail("updates must be {}, got {}", shape_str(want), ctx.input_type(2).str());
  Attrs a;
  a.set("axis", int64_t(0));
  a.set("shape", f.flat);
  emit_scatter(ctx, [&](ir::Value* v) {
    return reshape(ctx, ctx.emit(ir::OpKind::GatherGrad, {v, f.index}, a), ds);
  });
}

// DCR: [N, b, b, C/b², H, W] -> [N, C/b², H, b, W, b]; CRD: [N, C/b², b, b, H, W] -> the same.
void translate_depth_to_space(ImportContext& ctx) {
  const Blocks s = blocks_of(ctx);
  if (s.c % (s.b * s.b) != 0) ctx.fail("channels {} are not a multiple of blocksize² ({})", s.c, s.b * s.b);
  const int64_t c = s.c / (s.b * s.b);
  const std::string mode = ctx.attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") ctx.fail("mode must be DCR or CRD, got '{}'", mode);
  const bool dcr = mode == "DCR";
  ir::Value* split =
      reshape(ctx, ctx.input(0), dcr ? Shape{s.n, s.b, s.b, c, s.h, s.w} : Shape{s.n, c, s.b, s.b, s.h, s.w});
  ir::Value* moved = transpose(ctx, split, dcr ? Shape{0, 3, 4, 1, 5, 2} : Shape{0, 1, 4, 2, 5, 3});
  ctx.set_output(0, reshape(ctx, moved, {s.n, c, s.h * s.b, s.w * s.b}));
}

// [N, C, H/b, b, W/b, b] -> [N, b, b, C, H/b, W/b].
void translate_space_to_depth(ImportContext& ctx) {
  const Blocks s = blocks_of(ctx);
  if (s.h % s.b != 0 || s.w % s.b != 0)
    ctx.fail("height {} and width {} must be multiples of blocksize {}", s.h, s.w, s.b);
  ir::Value* split = reshape(ctx, ctx.input(0), {s.n, s.c, s.h / s.b, s.b, s.w / s.b, s.b});
  ir::Value* moved = transpose(ctx, split, {0, 3, 5, 1, 2, 4});
  ctx.set_output(0, reshape(ctx, moved, {s.n, s.c * s.b * s.b, s.h / s.b, s.w / s.b}));
}

// OneHot(indices, depth, values = [off, on]): a new axis of `depth` classes; an index in
// [-depth, depth) counts from the end when negative, any other index gives a row of `off`.
void translate_one_hot(ImportContext& ctx) {
  const Tensor& depth_tensor = ctx.required_constant(1, "depth");
  if (depth_tensor.type.numel() != 1) ctx.fail("depth must hold one value, got {}", depth_tensor.type.str());
  const double given = depth_tensor.as_double()[0];
  if (!(given >= 1 && given < 0x1p62)) ctx.fail("depth must be positive, got {}", given);
  const auto depth = int64_t(given);
  ir::Value* values = ctx.input(2);
  if (values->type.shape != Shape{2}) ctx.fail("values must have shape [2], got {}", values->type.str());
  const Shape& in = ctx.input_type(0).shape;
  const int64_t rank = int64_t(in.size()) + 1;
  const int64_t axis = resolve_axis(ctx, ctx.attr_int("axis", -1), rank);
  Shape out = in;
  out.insert(out.begin() + axis, depth);
  if (!checked_num_elements(out, dtype_size(values->type.dtype)))
    ctx.fail("output shape {} is too large", shape_str(out));
  ir::Value* index = from_end(ctx, cast_to(ctx, ctx.input(0), DType::I64), depth);
  Shape with_axis = in;
  with_axis.insert(with_axis.begin() + axis, 1);
  ir::Value* hot =
      binary(ctx, ir::OpKind::Equal, reshape(ctx, index, with_axis), index_range(ctx, depth, axis, rank));
  ctx.set_output(
      0, ctx.emit(ir::OpKind::Where, {hot, slice(ctx, values, 0, 1, 2), slice(ctx, values, 0, 0, 1)}));
}

// 1 where the first maximum along the axis is, 0 elsewhere (Softmax's axis convention).
void translate_hardmax(ImportContext& ctx) {
  const DType dtype = ctx.input_type(0).dtype;
  ctx.set_output(0, along_softmax_axis(ctx, [&](ir::Value* x, int64_t axis) {
                   Attrs a;
                   a.set("axis", axis);
                   a.set("keepdims", int64_t(1));
                   a.set("select_last_index", int64_t(0));
                   ir::Value* first_max = ctx.emit(ir::OpKind::ArgMax, {x}, std::move(a));
                   const int64_t rank = x->type.rank();
                   ir::Value* hot = binary(ctx, ir::OpKind::Equal, first_max,
                                           index_range(ctx, x->type.shape[size_t(axis)], axis, rank));
                   return cast_to(ctx, hot, dtype);
                 }));
}

// A 2-D constant of the input's shape: ones on diagonal k, zeros elsewhere.
void translate_eye_like(ImportContext& ctx) {
  const TensorType& in = ctx.input_type(0);
  if (in.rank() != 2) ctx.fail("expects a 2-D input, got {}", in.str());
  const DType dtype = ctx.has_attr("dtype") ? dtype_attr(ctx, "dtype") : in.dtype;
  const int64_t k = ctx.attr_int("k", 0);
  const int64_t rows = in.shape[0], cols = in.shape[1];
  std::vector<double> eye(size_t(rows * cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols) eye[size_t(r * cols + r + k)] = 1.0;
  ctx.set_output(0, ctx.constant(Tensor::from_double(dtype, eye, in.shape), "eye"));
}

// x + bias below -lambd, x - bias above lambd, 0 between.
void translate_shrink(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  const DType t = x->type.dtype;
  const double lambd = ctx.attr_float("lambd", 0.5), bias = ctx.attr_float("bias", 0.0);
  ir::Value* below = binary(ctx, ir::OpKind::Less, x, ctx.scalar(t, -lambd));
  ir::Value* above = binary(ctx, ir::OpKind::Greater, x, ctx.scalar(t, lambd));
  ir::Value* inner = ctx.emit(
      ir::OpKind::Where, {above, binary(ctx, ir::OpKind::Sub, x, ctx.scalar(t, bias)), ctx.scalar(t, 0)});
  ctx.set_output(
      0, ctx.emit(ir::OpKind::Where, {below, binary(ctx, ir::OpKind::Add, x, ctx.scalar(t, bias)), inner}));
}

// NaN is the one value that is not equal to itself.
void translate_is_nan(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  ctx.set_output(0, ctx.emit(ir::OpKind::Not, {binary(ctx, ir::OpKind::Equal, x, x)}));
}

void translate_is_inf(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  const DType t = x->type.dtype;
  const double inf = std::numeric_limits<double>::infinity();
  const bool positive = ctx.attr_int("detect_positive", 1) != 0,
             negative = ctx.attr_int("detect_negative", 1) != 0;
  ir::Value* result = nullptr;
  if (positive) result = binary(ctx, ir::OpKind::Equal, x, ctx.scalar(t, inf));
  if (negative) {
    ir::Value* is_negative = binary(ctx, ir::OpKind::Equal, x, ctx.scalar(t, -inf));
    result = result ? binary(ctx, ir::OpKind::Or, result, is_negative) : is_negative;
  }
  if (!result) result = filled(ctx, DType::Bool, x->type.shape, 0.0, "const");
  ctx.set_output(0, result);
}

// (x - mean) / (sqrt(variance) + 1e-9) over `axes` (default 0, 2, 3), as ONNX's function body.
void translate_mean_variance_normalization(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  const int64_t rank = x->type.rank();
  std::vector<int64_t> axes = ctx.attr_ints("axes", {0, 2, 3});
  for (auto& a : axes) a = resolve_axis(ctx, a, rank);
  auto mean = [&](ir::Value* v) {
    Attrs a;
    a.set("axes", axes);
    a.set("keepdims", int64_t(1));
    return ctx.emit(ir::OpKind::ReduceMean, {v}, std::move(a));
  };
  ir::Value* centered = binary(ctx, ir::OpKind::Sub, x, mean(x));
  ir::Value* deviation = ctx.emit(ir::OpKind::Sqrt, {mean(binary(ctx, ir::OpKind::Mul, centered, centered))});
  ir::Value* divisor = binary(ctx, ir::OpKind::Add, deviation, ctx.scalar(x->type.dtype, 1e-9));
  ctx.set_output(0, binary(ctx, ir::OpKind::Div, centered, divisor));
}

// x / (bias + alpha / size * sum of x² over the channel window)^beta. The window sum is an
// AveragePool (padding counted) over [N, 1, C, rest] with a [size, 1] kernel: its mean times size.
void translate_lrn(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  const Shape& dims = x->type.shape;
  if (dims.size() < 2) ctx.fail("expects an input of rank >= 2 (N, C, ...), got {}", x->type.str());
  const int64_t size = ctx.attr_int("size", 0);
  if (size <= 0) ctx.fail("attribute 'size' must be positive, got {}", size);
  const DType t = x->type.dtype;
  const double alpha = ctx.attr_float("alpha", 1e-4), beta = ctx.attr_float("beta", 0.75),
               bias = ctx.attr_float("bias", 1.0);
  ir::Value* squares = binary(ctx, ir::OpKind::Mul, x, x);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  Attrs pool;
  pool.set("kernel_shape", Shape{size, 1});
  pool.set("strides", Shape{1, 1});
  pool.set("pads", Shape{before, 0, after, 0});
  pool.set("dilations", Shape{1, 1});
  pool.set("ceil_mode", int64_t(0));
  pool.set("count_include_pad", int64_t(1));
  ir::Value* window_mean = ctx.emit(
      ir::OpKind::AveragePool,
      {reshape(ctx, squares, {dims[0], 1, dims[1], product(dims.begin() + 2, dims.end())})}, std::move(pool));
  ir::Value* scaled = binary(ctx, ir::OpKind::Mul, reshape(ctx, window_mean, dims), ctx.scalar(t, alpha));
  ir::Value* base = binary(ctx, ir::OpKind::Add, scaled, ctx.scalar(t, bias));
  ctx.set_output(0, binary(ctx, ir::OpKind::Div, x, binary(ctx, ir::OpKind::Pow, base, ctx.scalar(t, beta))));
}

// ScatterElements (and Scatter, opsets 9-10): a scatter (emit_scatter) by GatherElementsGrad.
void translate_scatter_elements(ImportContext& ctx) {
  Attrs a;
  a.set("axis", resolve_axis(ctx, ctx.attr_int("axis", 0), ctx.input_type(0).rank()));
  a.set("shape", ctx.input_type(0).shape);
  emit_scatter(ctx, [&](ir::Value* v) {
    return ctx.emit(ir::OpKind::GatherElementsGrad, {v, ctx.input(1)}, a);
  });
}

// MaxUnpool(X, I, output_shape?): X's values put at I's flat positions (MaxPool's Indices) in
// zeros of the default shape, (in - 1) * stride - pads + kernel per spatial dim, by a GatherGrad
// along the flattened result; a larger output_shape pads that at the end of each dim, as ONNX's
// reference does (the indices still count positions of the default shape).
void translate_max_unpool(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  const Shape& in = x->type.shape;
  if (in.size() < 3) ctx.fail("expects an input of rank >= 3 (N, C, ...), got {}", x->type.str());
  if (ctx.input_type(1).shape != in)
    ctx.fail("I must have X's shape {}, got {}", shape_str(in), ctx.input_type(1).str());
  if (!is_floating(x->type.dtype)) ctx.fail("X must be floating point, got {}", x->type.str());
  const size_t spatial = in.size() - 2;
  const Shape kernel = ctx.attr_ints("kernel_shape");
  const Shape strides = ctx.attr_ints("strides", Shape(spatial, 1));
  const Shape pads = ctx.attr_ints("pads", Shape(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
    ctx.fail("kernel_shape, strides or pads do not fit an input of rank {}", in.size());
  Shape out = {in[0], in[1]};
  for (size_t d = 0; d < spatial; ++d)
    out.push_back((in[2 + d] - 1) * strides[d] - pads[d] - pads[spatial + d] + kernel[d]);
  const Shape given = ctx.has_input(2) ? ctx.required_constant(2, "output_shape").as_int64() : out;
  Shape padding(2 * in.size(), 0);
  for (size_t d = 0; d < in.size() && given.size() == in.size(); ++d)
    padding[in.size() + d] = given[d] - out[d];
  if (given.size() != in.size() || !checked_num_elements(given, dtype_size(x->type.dtype)) ||
      std::any_of(padding.begin(), padding.end(), [](int64_t p) { return p < 0; }) || given[0] != in[0] ||
      given[1] != in[1])
    ctx.fail("output_shape {} does not fit X {} (at least {})", shape_str(given), x->type.str(),
             shape_str(out));
  const int64_t n = x->type.numel();
  Attrs a;
  a.set("axis", int64_t(0));
  a.set("shape", Shape{product(out.begin(), out.end())});
  ir::Value* flat =
      ctx.emit(ir::OpKind::GatherGrad, {reshape(ctx, x, {n}), reshape(ctx, ctx.input(1), {n})}, std::move(a));
  ir::Value* y = reshape(ctx, flat, out);
  if (given != out) {
    Attrs p;
    p.set("pads", padding);
    p.set("mode", std::string("constant"));
    p.set("value", 0.0);
    y = ctx.emit(ir::OpKind::Pad, {y}, std::move(p));
  }
  ctx.set_output(0, y);
}

// ReverseSequence(input, sequence_lens): along time_axis, each batch's first sequence_lens[b]
// elements reversed, the rest kept: a GatherElements with constant indices (the lengths must be
// known at compile time).
void translate_reverse_sequence(ImportContext& ctx) {
  const Shape& in = ctx.input_type(0).shape;
  const int64_t rank = int64_t(in.size());
  if (rank < 2) ctx.fail("expects an input of rank >= 2, got {}", ctx.input_type(0).str());
  const int64_t time = resolve_axis(ctx, ctx.attr_int("time_axis", 0), rank);
  const int64_t batch = resolve_axis(ctx, ctx.attr_int("batch_axis", 1), rank);
  if (time == batch || time > 1 || batch > 1)
    ctx.fail("time_axis and batch_axis must be 0 and 1 in some order");
  const std::vector<int64_t> lens = ctx.required_constant(1, "sequence_lens").as_int64();
  if (int64_t(lens.size()) != in[size_t(batch)])
    ctx.fail("sequence_lens has {} values for a batch of {}", lens.size(), in[size_t(batch)]);
  for (int64_t len : lens)
    if (len < 0 || len > in[size_t(time)])
      ctx.fail("sequence length {} is outside [0, {}]", len, in[size_t(time)]);
  const int64_t time_stride = product(in.begin() + time + 1, in.end());
  const int64_t batch_stride = product(in.begin() + batch + 1, in.end());
  std::vector<int64_t> index(size_t(checked_num_elements(in).value_or(0)));
  for (int64_t p = 0; p < int64_t(index.size()); ++p) {
    const int64_t t = p / time_stride % in[size_t(time)];
    const int64_t len = lens[size_t(p / batch_stride % in[size_t(batch)])];
    index[size_t(p)] = t < len ? len - 1 - t : t;
  }
  Attrs a;
  a.set("axis", time);
  ctx.set_output(0, ctx.emit(ir::OpKind::GatherElements,
                             {ctx.input(0), ctx.constant(Tensor::from_int64(index, in), "reverse_index")},
                             std::move(a)));
}

// TopK(X, K) {axis, largest, sorted}: TopKIndices, and the values a GatherElements of X at them
// (so the values differentiate). Always sorted (sorted = 0 allows any order).
void translate_top_k(ImportContext& ctx) {
  ir::Value* x = ctx.input(0);
  int64_t k = ctx.attr_int("k", -1);  // opsets 1-9
  if (ctx.opset() >= 10) {
    const Tensor& given = ctx.required_constant(1, "K");
    if (given.type.numel() != 1) ctx.fail("K must hold one value, got {}", given.type.str());
    k = given.as_int64()[0];
  }
  Attrs a;
  a.set("axis", resolve_axis(ctx, ctx.attr_int("axis", -1), x->type.rank()));
  a.set("k", k);
  a.set("largest", ctx.attr_int("largest", 1) != 0 ? int64_t(1) : int64_t(0));
  ir::Value* indices = ctx.emit(ir::OpKind::TopKIndices, {x}, a);
  Attrs gather;
  gather.set("axis", a.i("axis"));
  ctx.set_output(0, ctx.emit(ir::OpKind::GatherElements, {x, indices}, std::move(gather)));
  ctx.set_output(1, indices);
}

// If whose condition is known at compile time (static shapes fold most exported conditions):
// the branch taken, inlined.
void translate_if(ImportContext& ctx) {
  const Tensor& cond = ctx.required_constant(0, "cond");
  if (cond.type.numel() != 1) ctx.fail("cond must hold one value, got {}", cond.type.str());
  const bool then = cond.as_double()[0] != 0;
  const std::vector<ir::Value*> outputs =
      ctx.inline_graph(ctx.attr_graph(then ? "then_branch" : "else_branch"));
  if (int(outputs.size()) != ctx.num_outputs())
    ctx.fail("the {} branch has {} outputs, the node {}", then ? "then" : "else", outputs.size(),
             ctx.num_outputs());
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.set_output(i, outputs[size_t(i)]);
}

void translate_cast_like(ImportContext& ctx) {
  ctx.set_output(0, cast_to(ctx, ctx.input(0), ctx.input_type(1).dtype));
}

}  // namespace dlc::frontend
