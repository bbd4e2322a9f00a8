// ONNX Resize (opset 10 on) and Upsample (7, 9) imported as per-axis interpolation. Along each
// resized axis, last to first (the order of ONNX's reference, which matters only for
// tf_crop_and_resize's extrapolation), every output position reads a fixed set of input positions
// ("taps") with fixed weights, both computed here from the shapes and attributes as the reference
// computes them. A tap is a Gather with constant indices and its weights a constant Mul: nearest
// is one Gather per axis (exact), linear two taps, cubic four. So Resize trains (Gather's gradient
// sums back into the read positions) and runs on CUDA with no kernel of its own.
#include <cmath>

#include "dlc/checked_shape.h"
#include "frontend/onnx_ops/translate_util.h"
#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {

enum class Interpolation { Nearest, Linear, Cubic };

struct ResizeSpec {
  Interpolation mode = Interpolation::Nearest;
  std::string coordinates = "half_pixel";      // coordinate_transformation_mode
  std::string nearest = "round_prefer_floor";  // nearest_mode; "simple" before opset 11
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

// One axis's interpolation: output position o reads index[t][o] with weight[t][o] for each tap t,
// plus constant[o] (tf_crop_and_resize's extrapolation value outside the region).
struct AxisTaps {
  std::vector<std::vector<int64_t>> index;
  std::vector<std::vector<double>> weight;
  std::vector<double> constant;
};

// The input coordinate output position x maps to; `outside` is set where tf_crop_and_resize
// extrapolates. `length` is the reference's output length, scale * in (fractional for scales).
double original_coordinate(const ImportContext& ctx, const ResizeSpec& s, int64_t x, int64_t in, double scale,
                           double roi_start, double roi_end, bool* outside) {
  const double length = scale * double(in);
  const std::string& m = s.coordinates;
  if (m == "half_pixel") return (double(x) + 0.5) / scale - 0.5;
  if (m == "pytorch_half_pixel") return length == 1 ? -0.5 : (double(x) + 0.5) / scale - 0.5;
  if (m == "align_corners") return length == 1 ? 0.0 : double(x) * double(in - 1) / (length - 1);
  if (m == "asymmetric") return double(x) / scale;
  if (m == "tf_half_pixel_for_nn") return (double(x) + 0.5) / scale;
  if (m == "tf_crop_and_resize") {
    const double span = (roi_end - roi_start) * double(in - 1);
    const double v = (length == 1 ? span / 2 : double(x) * span / (length - 1)) + roi_start * double(in - 1);
    *outside = v < 0 || v > double(in - 1);
    return v;
  }
  ctx.fail("coordinate_transformation_mode '{}' is not supported", m);
}

std::vector<double> cubic_weights(double r, double a) {
  const double s = 1 - r;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1, ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

// Whether nearest interpolation at fraction r in (0, 1) of the way from f to f + 1 takes f + 1.
bool nearest_takes_upper(const ImportContext& ctx, const std::string& mode, double r, double scale) {
  if (mode == "round_prefer_floor") return r > 0.5;
  if (mode == "round_prefer_ceil") return r >= 0.5;
  if (mode == "floor") return false;
  if (mode == "ceil") return true;
  if (mode == "simple") return scale < 1;  // opsets 7-10, as ONNX Runtime: ceil when downsampling
  ctx.fail("nearest_mode '{}' is not supported", mode);
}

AxisTaps axis_taps(const ImportContext& ctx, const ResizeSpec& s, int64_t in, int64_t out, double scale,
                   double roi_start, double roi_end) {
  const int64_t taps = s.mode == Interpolation::Nearest ? 1 : s.mode == Interpolation::Linear ? 2 : 4;
  AxisTaps a;
  a.index.assign(size_t(taps), std::vector<int64_t>(size_t(out)));
  a.weight.assign(size_t(taps), std::vector<double>(size_t(out)));
  a.constant.assign(size_t(out), 0.0);
  for (int64_t o = 0; o < out; ++o) {
    bool outside = false;
    const double x = original_coordinate(ctx, s, o, in, scale, roi_start, roi_end, &outside);
    // The reference's neighbours: f and f + 1 around x, with x itself as f + 1 where it is whole.
    const bool whole = x == std::floor(x);
    const auto f = int64_t(std::floor(x)) - (whole ? 1 : 0);
    const double r = whole ? 1.0 : x - std::floor(x);
    std::vector<int64_t> at;
    std::vector<double> w;
    if (s.mode == Interpolation::Nearest) {
      at = {whole || nearest_takes_upper(ctx, s.nearest, r, scale) ? f + 1 : f};
      w = {1.0};
    } else if (s.mode == Interpolation::Linear) {
      at = {f, f + 1};
      w = {1 - r, r};
    } else {
      at = {f - 1, f, f + 1, f + 2};
      w = cubic_weights(r, s.cubic_a);
    }
    if (s.exclude_outside && s.mode != Interpolation::Nearest) {
      double sum = 0;
      for (size_t t = 0; t < at.size(); ++t) {
        if (at[t] < 0 || at[t] >= in) w[t] = 0;
        sum += w[t];
      }
      for (double& v : w) v /= sum;
    }
    for (size_t t = 0; t < at.size(); ++t) {
      a.index[t][size_t(o)] = std::clamp<int64_t>(at[t], 0, in - 1);  // edge padding
      a.weight[t][size_t(o)] = outside ? 0.0 : w[t];
    }
    if (outside) a.constant[size_t(o)] = s.extrapolation;
  }
  return a;
}

// Whether the taps give back the input: each output reads its own position with weight 1.
bool is_identity(const AxisTaps& a, int64_t in) {
  if (int64_t(a.constant.size()) != in) return false;
  for (size_t o = 0; o < a.constant.size(); ++o) {
    if (a.constant[o] != 0) return false;
    double own = 0;
    for (size_t t = 0; t < a.index.size(); ++t) {
      if (a.index[t][o] == int64_t(o))
        own += a.weight[t][o];
      else if (a.weight[t][o] != 0)
        return false;
    }
    if (own != 1) return false;
  }
  return true;
}

// x interpolated along `axis` by the taps. One tap of weight 1 everywhere (nearest inside the
// region) is the Gather alone.
ir::Value* interpolate(ImportContext& ctx, ir::Value* x, int64_t axis, const AxisTaps& a) {
  const int64_t out = int64_t(a.constant.size());
  const DType dtype = x->type.dtype;
  Shape along(size_t(x->type.rank() - axis), 1);  // a per-position factor broadcast along `axis`
  along[0] = out;
  Attrs gather;
  gather.set("axis", axis);
  const bool gather_only =
      a.index.size() == 1 &&
      std::all_of(a.weight[0].begin(), a.weight[0].end(), [](double w) { return w == 1; }) &&
      std::all_of(a.constant.begin(), a.constant.end(), [](double c) { return c == 0; });
  ir::Value* y = nullptr;
  for (size_t t = 0; t < a.index.size(); ++t) {
    const bool unused = std::all_of(a.weight[t].begin(), a.weight[t].end(), [](double w) { return w == 0; });
    if (unused && (y || t + 1 < a.index.size())) continue;
    ir::Value* read = ctx.emit(
        ir::OpKind::Gather, {x, ctx.constant(Tensor::from_int64(a.index[t], {out}), "resize_index")}, gather);
    if (gather_only) return read;
    ir::Value* term =
        ctx.emit(ir::OpKind::Mul,
                 {read, ctx.constant(Tensor::from_double(dtype, a.weight[t], along), "resize_weight")});
    y = y ? ctx.emit(ir::OpKind::Add, {y, term}) : term;
  }
  if (std::any_of(a.constant.begin(), a.constant.end(), [](double c) { return c != 0; }))
    y = ctx.emit(ir::OpKind::Add,
                 {y, ctx.constant(Tensor::from_double(dtype, a.constant, along), "resize_constant")});
  return y;
}

Interpolation interpolation(const ImportContext& ctx, const std::string& mode) {
  if (mode == "nearest") return Interpolation::Nearest;
  if (mode == "linear" || mode == "bilinear") return Interpolation::Linear;
  if (mode == "cubic") return Interpolation::Cubic;
  ctx.fail("mode '{}' is not supported (nearest, linear, cubic)", mode);
}

// Resizes input 0 to `out` with `scales` (one per axis) and the region `roi` (2 * rank values or
// empty), axis by axis.
void emit_resize(ImportContext& ctx, const ResizeSpec& s, const Shape& out, const std::vector<double>& scales,
                 const std::vector<double>& roi) {
  ir::Value* y = ctx.input(0);
  const Shape& in = y->type.shape;
  const size_t rank = in.size();
  if (!is_floating(y->type.dtype) && s.mode != Interpolation::Nearest)
    ctx.fail("{} interpolation of {} is not supported", s.mode == Interpolation::Linear ? "linear" : "cubic",
             y->type.str());
  if (!checked_num_elements(out, dtype_size(y->type.dtype)))
    ctx.fail("output shape {} is too large", shape_str(out));
  for (size_t d = rank; d-- > 0;) {
    if (out[d] <= 0) ctx.fail("output dimension {} is {}", d, out[d]);
    if (in[d] == 0) ctx.fail("cannot resize axis {} of an empty input {}", d, y->type.str());
    const AxisTaps a = axis_taps(ctx, s, in[d], out[d], scales[d], roi.empty() ? 0.0 : roi[d],
                                 roi.empty() ? 1.0 : roi[rank + d]);
    if (!is_identity(a, in[d])) y = interpolate(ctx, y, int64_t(d), a);
  }
  ctx.set_output(0, y);
}

std::vector<double> resize_scales(ImportContext& ctx, const std::vector<double>& given, const Shape& in) {
  if (given.size() != in.size())
    ctx.fail("scales have {} values for an input of rank {}", given.size(), in.size());
  for (double v : given)
    if (!(v > 0)) ctx.fail("scales must be positive, got {}", v);
  return given;
}

// floor(in * scale), or, for tf_crop_and_resize, floor(in * (roi end - roi start) * scale).
Shape scaled_shape(const ImportContext& ctx, const Shape& in, const std::vector<double>& scales,
                   const std::vector<double>& roi) {
  Shape out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const double region = roi.empty() ? 1.0 : roi[in.size() + d] - roi[d];
    const double size = std::floor(double(in[d]) * region * scales[d]);
    if (!(size >= 0 && size < 0x1p62))
      ctx.fail("scale {} gives axis {} of size {} a size of {}", scales[d], d, in[d], size);
    out[d] = int64_t(size);
  }
  return out;
}

}  // namespace

// Resize(X, roi?, scales?, sizes?) from opset 11; Resize(X, scales) in opset 10.
void translate_resize(ImportContext& ctx) {
  ResizeSpec s;
  s.mode = interpolation(ctx, ctx.attr_string("mode", "nearest"));
  const Shape& in = ctx.input_type(0).shape;
  if (ctx.opset() < 11) {
    s.coordinates = "asymmetric";
    s.nearest = "simple";
    const std::vector<double> scales = resize_scales(ctx, ctx.required_constant(1, "scales").as_double(), in);
    emit_resize(ctx, s, scaled_shape(ctx, in, scales, {}), scales, {});
    return;
  }
  s.coordinates = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  s.nearest = ctx.attr_string("nearest_mode", "round_prefer_floor");
  s.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75);
  s.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  s.extrapolation = ctx.attr_float("extrapolation_value", 0.0);
  if (ctx.attr_int("antialias", 0) != 0) ctx.fail("antialias is not supported");
  if (ctx.has_attr("axes")) ctx.fail("the axes attribute (opset 18) is not supported");
  std::vector<double> roi;
  if (s.coordinates == "tf_crop_and_resize") {
    roi = ctx.required_constant(1, "roi").as_double();
    if (roi.size() != 2 * in.size())
      ctx.fail("roi has {} values for an input of rank {}", roi.size(), in.size());
  }
  const Tensor* scales = ctx.has_input(2) ? &ctx.required_constant(2, "scales") : nullptr;
  if (scales && scales->type.numel() == 0) scales = nullptr;  // an empty scales tensor stands for none
  const bool has_sizes = ctx.has_input(3);
  if (bool(scales) == has_sizes) ctx.fail("exactly one of scales and sizes must be given");
  if (scales) {
    const std::vector<double> factors = resize_scales(ctx, scales->as_double(), in);
    emit_resize(ctx, s, scaled_shape(ctx, in, factors, roi), factors, roi);
    return;
  }
  const Shape out = ctx.required_constant(3, "sizes").as_int64();
  if (out.size() != in.size())
    ctx.fail("sizes have {} values for an input of rank {}", out.size(), in.size());
  std::vector<double> factors(in.size());
  for (size_t d = 0; d < in.size(); ++d) factors[d] = double(out[d]) / double(in[d]);
  emit_resize(ctx, s, out, factors, roi);
}

// Upsample(X, scales) (scales an attribute in opset 7): asymmetric coordinates, as Resize-10.
void translate_upsample(ImportContext& ctx) {
  ResizeSpec s;
  s.mode = interpolation(ctx, ctx.attr_string("mode", "nearest"));
  s.coordinates = "asymmetric";
  s.nearest = "simple";
  const Shape& in = ctx.input_type(0).shape;
  const std::vector<double> scales = resize_scales(
      ctx, ctx.opset() < 9 ? ctx.attr_floats("scales") : ctx.required_constant(1, "scales").as_double(), in);
  emit_resize(ctx, s, scaled_shape(ctx, in, scales, {}), scales, {});
}

}  // namespace dlc::frontend
