// Gradient rules of the shape ops: the gradient is moved back to the input's layout.
#include <fmt/format.h>

#include <algorithm>

#include "dlc/error.h"
#include "passes/grad/rules.h"

namespace dlc::passes::grad {

using ir::OpKind;

void grad_reshape(GradContext& c) { c.set_dx(0, c.reshape(c.dy(), c.x(0)->type.shape)); }

void grad_identity(GradContext& c) { c.set_dx(0, c.dy()); }

void grad_transpose(GradContext& c) {
  const auto& perm = c.node().attrs.ints("perm");
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
  Attrs a;
  a.set("perm", inverse);
  c.set_dx(0, c.emit(OpKind::Transpose, {c.dy()}, a));
}

void grad_expand(GradContext& c) { c.set_dx(0, c.reduce_to(c.dy(), c.x(0)->type.shape)); }

void grad_tile(GradContext& c) {
  // Output axis d is (repeat, index): view dy as [r0, n0, r1, n1, …] and sum the repeats.
  const Shape& in = c.x(0)->type.shape;
  const Shape& repeats = c.node().attrs.ints("repeats");
  Shape split;
  std::vector<int64_t> repeat_axes;
  for (size_t d = 0; d < in.size(); ++d) {
    repeat_axes.push_back(int64_t(split.size()));
    split.insert(split.end(), {repeats[d], in[d]});
  }
  Attrs a;
  a.set("axes", repeat_axes);
  a.set("keepdims", int64_t(0));
  c.set_dx(0, c.reshape(c.emit(OpKind::ReduceSum, {c.reshape(c.dy(), split)}, a), in));
}

void grad_concat(GradContext& c) {
  // dy split back into the inputs' extents along the axis.
  const int64_t rank = c.y()->type.rank();
  int64_t axis = c.node().attrs.i("axis");
  if (axis < 0) axis += rank;
  Shape sizes;
  for (ir::Value* in : c.node().inputs) sizes.push_back(in->type.shape[size_t(axis)]);
  Attrs a;
  a.set("axis", axis);
  a.set("split", sizes);
  std::vector<ir::Value*> parts = c.emit_multi(OpKind::Split, {c.dy()}, a, int(sizes.size()));
  for (size_t i = 0; i < parts.size(); ++i) c.set_dx(int(i), parts[i]);
}

void grad_split(GradContext& c) {
  // The outputs' gradients concatenated; an output that does not reach the loss gives zeros.
  std::vector<ir::Value*> parts;
  for (size_t i = 0; i < c.node().outputs.size(); ++i) {
    ir::Value* out = c.node().outputs[i];
    parts.push_back(c.dy(int(i)) ? c.dy(int(i)) : c.zeros(out->type));
  }
  Attrs a;
  a.set("axis", c.node().attrs.i("axis", 0));
  c.set_dx(0, c.emit(OpKind::Concat, parts, a));
}

void grad_slice(GradContext& c) {
  Attrs a;
  a.set("shape", c.x(0)->type.shape);
  a.set("starts", c.node().attrs.ints("starts"));
  a.set("axes", c.node().attrs.ints("axes"));
  a.set("steps", c.node().attrs.ints("steps", Shape(c.node().attrs.ints("starts").size(), 1)));
  c.set_dx(0, c.emit(OpKind::SliceGrad, {c.dy()}, a));
}

void grad_pad(GradContext& c) {
  // Constant mode: dy with the padding cut off (and zeros where a negative pad cropped x).
  const std::string mode = c.node().attrs.s("mode", "constant");
  if (mode != "constant")
    throw Error(
        fmt::format("autodiff: node '{}' (Pad) in mode '{}' has no gradient rule (constant mode only)",
                    c.node().name, mode));
  const Shape& in = c.x(0)->type.shape;
  const Shape& pads = c.node().attrs.ints("pads");
  const size_t rank = in.size();
  Shape crop(2 * rank), starts, ends, axes;
  bool cropped = false;
  for (size_t d = 0; d < rank; ++d) {
    crop[d] = std::max<int64_t>(0, -pads[d]);
    crop[d + rank] = std::max<int64_t>(0, -pads[d + rank]);
    cropped = cropped || crop[d] || crop[d + rank];
    const int64_t begin = std::max<int64_t>(0, pads[d]);
    if (begin || std::max<int64_t>(0, pads[d + rank])) {
      axes.push_back(int64_t(d));
      starts.push_back(begin);
      ends.push_back(begin + in[d]);
    }
  }
  ir::Value* d = c.dy();
  if (cropped) {
    Attrs p;
    p.set("pads", crop);
    d = c.emit(OpKind::Pad, {d}, p);
  }
  if (!axes.empty()) {
    Attrs s;
    s.set("starts", starts);
    s.set("ends", ends);
    s.set("axes", axes);
    d = c.emit(OpKind::Slice, {d}, s);
  }
  c.set_dx(0, d);
}

namespace {

// The gradient of a gather along an axis (Gather, GatherElements): `op`(dy, indices) {axis, shape}.
void gather_gradient(GradContext& c, OpKind op) {
  const int64_t rank = c.x(0)->type.rank();
  int64_t axis = c.node().attrs.i("axis", 0);
  if (axis < 0) axis += rank;
  Attrs a;
  a.set("axis", axis);
  a.set("shape", c.x(0)->type.shape);
  c.set_dx(0, c.emit(op, {c.dy(), c.x(1)}, a));
}

// The gradient of a scatter-add (GatherGrad, GatherElementsGrad: what ScatterElements imports as)
// with respect to what it scatters: the gather `op`(dy, indices) {axis} reads it back.
void scatter_gradient(GradContext& c, OpKind op) {
  Attrs a;
  a.set("axis", c.node().attrs.i("axis", 0));
  c.set_dx(0, c.emit(op, {c.dy(), c.x(1)}, a));
}

}  // namespace

void grad_gather(GradContext& c) { gather_gradient(c, OpKind::GatherGrad); }

void grad_gather_elements(GradContext& c) { gather_gradient(c, OpKind::GatherElementsGrad); }

void grad_gather_grad(GradContext& c) { scatter_gradient(c, OpKind::Gather); }

void grad_gather_elements_grad(GradContext& c) { scatter_gradient(c, OpKind::GatherElements); }

void grad_trilu(GradContext& c) { c.set_dx(0, c.emit(OpKind::Trilu, {c.dy()}, c.node().attrs)); }

}  // namespace dlc::passes::grad
