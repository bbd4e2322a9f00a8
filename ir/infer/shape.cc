// Shape inference of the shape family: every shape-like operand is an attribute, so each output
// shape follows from the input types and the attributes alone (conventions in ir/ops/shape.def).
#include <algorithm>
#include <set>

#include "ir/infer.h"

namespace dlc::ir {

namespace {

// The perm attribute, reversed dims by default; checked to be a permutation of [0, rank).
Shape permutation(const InferContext& ctx, int64_t rank) {
  Shape perm = ctx.attrs().ints("perm", {});
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  if (int64_t(perm.size()) != rank)
    ctx.fail("perm {} has the wrong length for rank {}", shape_str(perm), rank);
  std::set<int64_t> seen;
  for (int64_t& p : perm) {
    p = normalize_axis(ctx, p, rank);
    if (!seen.insert(p).second) ctx.fail("perm {} repeats axis {}", shape_str(perm), p);
  }
  return perm;
}

}  // namespace

void infer_Identity(InferContext& ctx) { ctx.outputs[0] = ctx.input(0); }

void infer_Reshape(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const Shape& shape = ctx.attrs().ints("shape");
  for (int64_t d : shape)
    if (d < 0) ctx.fail("shape {} must have explicit non-negative dims", shape_str(shape));
  if (num_elements(shape) != in.numel())
    ctx.fail("cannot reshape {} to {}: element counts differ", in.str(), shape_str(shape));
  ctx.outputs[0] = TensorType{in.dtype, shape};
}

void infer_Transpose(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  Shape perm = permutation(ctx, in.rank());
  Shape out;
  for (int64_t p : perm) out.push_back(in.shape[p]);
  ctx.outputs[0] = TensorType{in.dtype, out};
}

void infer_Expand(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const Shape& shape = ctx.attrs().ints("shape");
  if (broadcast_shapes(ctx, in.shape, shape) != shape)
    ctx.fail("{} does not broadcast to shape {}", in.str(), shape_str(shape));
  ctx.outputs[0] = TensorType{in.dtype, shape};
}

void infer_Tile(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const Shape& repeats = ctx.attrs().ints("repeats");
  if (int64_t(repeats.size()) != in.rank())
    ctx.fail("repeats {} has the wrong length for {}", shape_str(repeats), in.str());
  Shape out = in.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0) ctx.fail("repeats {} must be non-negative", shape_str(repeats));
    out[d] *= repeats[d];
  }
  ctx.outputs[0] = TensorType{in.dtype, out};
}

void infer_Slice(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const Shape& starts = ctx.attrs().ints("starts");
  const Shape& ends = ctx.attrs().ints("ends");
  const Shape& axes = ctx.attrs().ints("axes");
  const Shape steps = ctx.attrs().ints("steps", Shape(starts.size(), 1));
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail("starts, ends, axes and steps must have one entry per sliced axis");
  Shape out = in.shape;
  std::set<int64_t> seen;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axes[k];
    if (axis < 0 || axis >= in.rank() || !seen.insert(axis).second)
      ctx.fail("axes {} must be distinct axes of {}", shape_str(axes), in.str());
    const int64_t dim = in.shape[axis], step = steps[k], s = starts[k], e = ends[k];
    if (step == 0) ctx.fail("steps must be non-zero");
    const int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
    if (s < lo || s > hi || e < lo || e > hi)
      ctx.fail("start {} / end {} of axis {} are not clamped to [{}, {}] for step {}", s, e, axis, lo, hi,
               step);
    out[axis] = step > 0 ? (e > s ? (e - s - 1) / step + 1 : 0) : (s > e ? (s - e - 1) / -step + 1 : 0);
  }
  ctx.outputs[0] = TensorType{in.dtype, out};
}

void infer_Concat(InferContext& ctx) {
  const TensorType& first = ctx.input(0);
  const int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis"), first.rank());
  if (first.rank() == 0) ctx.fail("cannot concatenate scalars");
  TensorType out = first;
  out.shape[axis] = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    bool ok = t.dtype == first.dtype && t.rank() == first.rank();
    for (int64_t d = 0; ok && d < t.rank(); ++d) ok = d == axis || t.shape[d] == first.shape[d];
    if (!ok) ctx.fail("input {} {} does not match input 0 {} off axis {}", i, t.str(), first.str(), axis);
    out.shape[axis] += t.shape[axis];
  }
  ctx.outputs[0] = out;
}

void infer_Split(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis", 0), in.rank());
  const Shape& split = ctx.attrs().ints("split");
  if (int64_t(split.size()) != ctx.num_outputs())
    ctx.fail("split {} has {} sizes for {} outputs", shape_str(split), split.size(), ctx.num_outputs());
  int64_t total = 0;
  for (size_t k = 0; k < split.size(); ++k) {
    if (split[k] < 0) ctx.fail("split {} has a negative size", shape_str(split));
    total += split[k];
    ctx.outputs[k] = in;
    ctx.outputs[k].shape[axis] = split[k];
  }
  if (total != in.shape[axis])
    ctx.fail("split {} does not sum to axis {} of {}", shape_str(split), axis, in.str());
}

void infer_Pad(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  const Shape& pads = ctx.attrs().ints("pads");
  const std::string mode = ctx.attrs().s("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") ctx.fail("unknown mode '{}'", mode);
  if (int64_t(pads.size()) != 2 * in.rank())
    ctx.fail("pads {} must have 2 x rank entries for {}", shape_str(pads), in.str());
  Shape out = in.shape;
  for (int64_t d = 0; d < in.rank(); ++d) {
    out[d] += pads[d] + pads[d + in.rank()];
    if (out[d] < 0) ctx.fail("pads {} remove more than axis {} of {}", shape_str(pads), d, in.str());
    if (mode != "constant" && in.shape[d] == 0 && out[d] > 0)
      ctx.fail("cannot {}-pad empty axis {}", mode, d);
  }
  ctx.outputs[0] = TensorType{in.dtype, out};
}

void infer_Gather(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  check_indices(ctx, 1);
  if (data.rank() == 0) ctx.fail("cannot gather from a scalar");
  const int64_t axis = normalize_axis(ctx, ctx.attrs().i("axis", 0), data.rank());
  Shape out(data.shape.begin(), data.shape.begin() + axis);
  const Shape& idx = ctx.input(1).shape;
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  ctx.outputs[0] = TensorType{data.dtype, out};
}

void infer_GatherElements(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  check_indices(ctx, 1);
  const TensorType& idx = ctx.input(1);
  if (idx.rank() != data.rank() || data.rank() == 0)
    ctx.fail("indices {} must have the rank of data {}", idx.str(), data.str());
  check_gather_elements_extent(ctx, idx.shape, data.shape,
                               normalize_axis(ctx, ctx.attrs().i("axis", 0), data.rank()));
  ctx.outputs[0] = TensorType{data.dtype, idx.shape};
}

void infer_GatherND(InferContext& ctx) {
  const TensorType& data = ctx.input(0);
  check_indices(ctx, 1);
  const Shape& idx = ctx.input(1).shape;
  const int64_t b = ctx.attrs().i("batch_dims", 0);
  if (idx.empty()) ctx.fail("indices must have rank >= 1");
  const int64_t k = idx.back();
  if (b < 0 || b >= int64_t(idx.size()) || b + k > data.rank())
    ctx.fail("batch_dims {} with indices {} do not fit data {}", b, shape_str(idx), data.str());
  for (int64_t d = 0; d < b; ++d)
    if (idx[d] != data.shape[d])
      ctx.fail("batch dims of indices {} and data {} differ", shape_str(idx), data.str());
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.shape.begin() + b + k, data.shape.end());
  ctx.outputs[0] = TensorType{data.dtype, out};
}

void infer_Trilu(InferContext& ctx) {
  if (ctx.input(0).rank() < 2) ctx.fail("expects rank >= 2, got {}", ctx.input(0).str());
  ctx.outputs[0] = ctx.input(0);
}

}  // namespace dlc::ir
