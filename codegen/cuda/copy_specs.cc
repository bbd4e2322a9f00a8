// The copies of the data-movement ops from their attributes (copy_specs.h).
#include "codegen/cuda/copy_specs.h"

#include <fmt/format.h>

#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

// The source `t` read at the output's coordinates.
CopySource identity_source(const TensorType& t) {
  const size_t rank = t.shape.size();
  return {t.shape, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), {}, {}};
}

// Slice's and SliceGrad's per-axis starts and steps, by axis.
struct SlicedAxes {
  std::vector<size_t> axes;
  std::vector<int64_t> starts, steps;
};

SlicedAxes sliced_axes(const Attrs& attrs, size_t rank) {
  SlicedAxes s;
  s.starts = attrs.ints("starts");
  const std::vector<int64_t> axes = attrs.ints("axes");
  s.steps = attrs.ints("steps", std::vector<int64_t>(s.starts.size(), 1));
  if (axes.size() != s.starts.size() || s.steps.size() != s.starts.size())
    throw Error("starts, axes and steps differ in length");
  for (size_t k = 0; k < axes.size(); ++k) {
    if (s.steps[k] == 0) throw Error("a step is 0");
    s.axes.push_back(size_t(normalized_axis(axes[k], int64_t(rank))));
  }
  return s;
}

}  // namespace

CopySpec slice_copy(const Attrs& attrs, const TensorType& in, const TensorType& out) {
  CopySpec spec{in.dtype, out.shape, {identity_source(in)}, "constant", 0};
  const SlicedAxes s = sliced_axes(attrs, in.shape.size());
  for (size_t k = 0; k < s.axes.size(); ++k) {
    spec.sources[0].start[s.axes[k]] = s.starts[k];
    spec.sources[0].step[s.axes[k]] = s.steps[k];
  }
  return spec;
}

CopySpec slice_grad_copy(const Attrs& attrs, const TensorType& dy, const TensorType& dx) {
  // x = start + step · j  ⇔  j = (x - start) / step = (start - x) / -step.
  CopySpec spec{dy.dtype, dx.shape, {identity_source(dy)}, "constant", 0};
  CopySource& src = spec.sources[0];
  src.divisor.assign(dx.shape.size(), 1);
  const SlicedAxes s = sliced_axes(attrs, dx.shape.size());
  for (size_t k = 0; k < s.axes.size(); ++k) {
    const size_t d = s.axes[k];
    const bool forward = s.steps[k] > 0;
    src.start[d] = forward ? -s.starts[k] : s.starts[k];
    src.step[d] = forward ? 1 : -1;
    src.divisor[d] = forward ? s.steps[k] : -s.steps[k];
  }
  return spec;
}

CopySpec pad_copy(const Attrs& attrs, const TensorType& in, const TensorType& out) {
  CopySpec spec{in.dtype, out.shape, {identity_source(in)}, attrs.s("mode", "constant"), attrs.f("value", 0)};
  const std::vector<int64_t> pads = attrs.ints("pads");
  if (pads.size() != 2 * in.shape.size()) throw Error("pads must have 2 x rank entries");
  for (size_t d = 0; d < in.shape.size(); ++d) spec.sources[0].start[d] = -pads[d];
  return spec;
}

CopySpec concat_copy(const Attrs& attrs, const std::vector<TensorType>& ins, const TensorType& out) {
  const size_t axis = size_t(normalized_axis(attrs.i("axis"), int64_t(out.shape.size())));
  CopySpec spec{out.dtype, out.shape, {}, "constant", 0};
  int64_t offset = 0;
  for (const TensorType& in : ins) {
    CopySource src = identity_source(in);
    src.start[axis] = -offset;
    offset += src.dims[axis];
    spec.sources.push_back(std::move(src));
  }
  return spec;
}

// Output axis i is input axis perm[i] (default: reversed).
CopySpec transpose_copy(const Attrs& attrs, const TensorType& in, const TensorType& out) {
  const size_t rank = in.shape.size();
  std::vector<int64_t> perm = attrs.ints("perm", {});
  if (perm.empty())
    for (size_t i = rank; i-- > 0;) perm.push_back(int64_t(i));
  if (perm.size() != rank) throw Error("perm does not have the input's rank");
  CopySpec spec{in.dtype, out.shape, {identity_source(in)}, "constant", 0};
  spec.sources[0].out_axis.assign(rank, 0);
  for (size_t i = 0; i < rank; ++i)
    spec.sources[0].out_axis[size_t(normalized_axis(perm[i], int64_t(rank)))] = int64_t(i);
  return spec;
}

// out[o] = in[o mod dims]; an empty input tiles to an empty output, which reads nothing.
CopySpec tile_copy(const TensorType& in, const TensorType& out) {
  if (in.shape.size() != out.shape.size()) throw Error("the output does not have the input's rank");
  return {in.dtype, out.shape, {identity_source(in)}, in.numel() == 0 ? "constant" : "wrap", 0};
}

// Upper keeps col - row >= k, lower col - row <= k (the CPU kernel's bounds).
CopySpec trilu_copy(const Attrs& attrs, const TensorType& in, const TensorType& out) {
  if (in.shape.size() < 2) throw Error("Trilu needs rank 2 or more");
  CopySpec spec{in.dtype, out.shape, {identity_source(in)}, "constant", 0};
  spec.band = attrs.i("upper", 1) != 0 ? 1 : -1;
  spec.band_k = attrs.i("k", 0);
  return spec;
}

// Output k is the slice of the input at the sum of the earlier outputs' extents on the axis.
std::vector<CopySpec> split_copies(const Attrs& attrs, const TensorType& in,
                                   const std::vector<TensorType>& outs) {
  const size_t axis = size_t(normalized_axis(attrs.i("axis", 0), int64_t(in.shape.size())));
  std::vector<CopySpec> specs;
  int64_t offset = 0;
  for (const TensorType& out : outs) {
    if (out.shape.size() != in.shape.size()) throw Error("an output does not have the input's rank");
    CopySpec spec{in.dtype, out.shape, {identity_source(in)}, "constant", 0};
    spec.sources[0].start[axis] = offset;
    offset += out.shape[axis];
    specs.push_back(std::move(spec));
  }
  if (offset != in.shape[axis]) throw Error("the outputs do not cover the input's axis");
  return specs;
}

GatherElementsSpec gather_elements_spec(const Attrs& attrs, const TensorType& data, const TensorType& indices,
                                        const TensorType& out) {
  if (indices.shape != out.shape) throw Error("the output does not have the indices' shape");
  const int64_t axis = normalized_axis(attrs.i("axis", 0), int64_t(data.shape.size()));
  return {data.dtype, indices.dtype, data.shape, out.shape, axis};
}

KernelSource emit_copy_op(const std::string& op, const Attrs& attrs, const std::vector<TensorType>& ins,
                          const std::vector<TensorType>& outs) {
  if (ins.empty() || outs.empty()) throw Error(fmt::format("{}: an operand is missing", op));
  if (op == "Split") return emit_copies(split_copies(attrs, ins[0], outs));
  if (op == "Concat") return emit_copy(concat_copy(attrs, ins, outs[0]));
  if (op == "Slice") return emit_copy(slice_copy(attrs, ins[0], outs[0]));
  if (op == "SliceGrad") return emit_copy(slice_grad_copy(attrs, ins[0], outs[0]));
  if (op == "Pad") return emit_copy(pad_copy(attrs, ins[0], outs[0]));
  if (op == "Tile") return emit_copy(tile_copy(ins[0], outs[0]));
  if (op == "Transpose") return emit_copy(transpose_copy(attrs, ins[0], outs[0]));
  if (op == "Trilu") return emit_copy(trilu_copy(attrs, ins[0], outs[0]));
  if (op == "GatherElements") {
    if (ins.size() < 2) throw Error("GatherElements: the indices are missing");
    return emit_gather_elements(gather_elements_spec(attrs, ins[0], ins[1], outs[0]));
  }
  throw Error(fmt::format("{} is no data-movement op", op));
}

}  // namespace dlc::codegen::cuda
