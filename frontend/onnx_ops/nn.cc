// ONNX nn ops: MatMul, Gemm (-> MatMul * alpha + beta * C), Einsum (equation canonicalized:
// ellipses expanded, output explicit), Conv, ConvTranspose and pooling (auto_pad and
// ConvTranspose's output_shape resolved into explicit pads / output_padding).
#include <algorithm>
#include <map>

#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

namespace {

// Spatial window of a conv/pool node, every attribute explicit.
struct Window {
  Shape kernel, strides, pads, dilations;
};

// The spatial dims of the (N, C, D…) input 0.
Shape spatial_dims(ImportContext& ctx) {
  const Shape& x = ctx.input_type(0).shape;
  if (x.size() < 3) ctx.fail("input must be N x C x D1…, got {}", ctx.input_type(0).str());
  return Shape(x.begin() + 2, x.end());
}

// Reads kernel_shape (else `weight_kernel`), strides, dilations and pads, defaulted.
Window read_window(ImportContext& ctx, size_t spatial, const Shape* weight_kernel) {
  Window w;
  if (ctx.has_attr("kernel_shape"))
    w.kernel = ctx.attr_ints("kernel_shape");
  else if (weight_kernel)
    w.kernel = *weight_kernel;
  else
    ctx.fail("attribute 'kernel_shape' is required");
  w.strides = ctx.attr_ints("strides", Shape(spatial, 1));
  w.dilations = ctx.attr_ints("dilations", Shape(spatial, 1));
  w.pads = ctx.attr_ints("pads", Shape(2 * spatial, 0));
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial)
    ctx.fail("kernel_shape/strides/dilations/pads do not match {} spatial dims", spatial);
  for (size_t i = 0; i < spatial; ++i)
    if (w.strides[i] < 1) ctx.fail("strides must be positive");
  return w;
}

// Splits a total padding into (begin, end): SAME_UPPER puts the odd element at the end.
void split_padding(Window& w, size_t i, size_t spatial, int64_t total, bool upper) {
  w.pads[i] = upper ? total / 2 : total - total / 2;
  w.pads[i + spatial] = total - w.pads[i];
}

// Conv and pooling: auto_pad resolved into pads (the output of SAME is ceil(in / stride)).
Window forward_window(ImportContext& ctx, const Shape* weight_kernel) {
  const Shape in = spatial_dims(ctx);
  const size_t spatial = in.size();
  Window w = read_window(ctx, spatial, weight_kernel);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) {
      const int64_t out = (in[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in[i]);
      split_padding(w, i, spatial, total, auto_pad == "SAME_UPPER");
    }
  } else if (auto_pad != "NOTSET" && !auto_pad.empty()) {
    ctx.fail("unknown auto_pad '{}'", auto_pad);
  }
  return w;
}

Attrs window_attrs(const Window& w) {
  Attrs a;
  a.set("kernel_shape", w.kernel);
  a.set("strides", w.strides);
  a.set("pads", w.pads);
  a.set("dilations", w.dilations);
  return a;
}

std::vector<ir::Value*> conv_inputs(ImportContext& ctx) {
  std::vector<ir::Value*> in = {ctx.input(0), ctx.input(1)};
  if (ctx.has_input(2)) in.push_back(ctx.input(2));
  return in;
}

Shape weight_kernel(ImportContext& ctx) {
  const Shape& w = ctx.input_type(1).shape;
  if (w.size() < 3) ctx.fail("weight must have spatial dims, got {}", ctx.input_type(1).str());
  return Shape(w.begin() + 2, w.end());
}

// Letters not used by `eq`, for ellipsis dims.
std::string free_letters(const std::string& eq) {
  std::string out;
  for (char c = 'a'; c <= 'z'; ++c)
    if (eq.find(c) == std::string::npos) out += c;
  for (char c = 'A'; c <= 'Z'; ++c)
    if (eq.find(c) == std::string::npos) out += c;
  return out;
}

}  // namespace

void translate_matmul(ImportContext& ctx) {
  // The IR MatMul's optional bias is internal (fusion's epilogue), not ONNX's.
  if (ctx.num_inputs() != 2) ctx.fail("MatMul takes 2 inputs, got {}", ctx.num_inputs());
  ctx.set_output(0, ctx.emit(ir::OpKind::MatMul, {ctx.input(0), ctx.input(1)}));
}

void translate_gemm(ImportContext& ctx) {
  const DType t = ctx.input_type(0).dtype;
  if (ctx.input_type(0).shape.size() != 2 || ctx.input_type(1).shape.size() != 2)
    ctx.fail("A and B must be matrices, got {} and {}", ctx.input_type(0).str(), ctx.input_type(1).str());
  Attrs attrs;
  attrs.set("transpose_a", ctx.attr_int("transA", 0) != 0 ? int64_t(1) : int64_t(0));
  attrs.set("transpose_b", ctx.attr_int("transB", 0) != 0 ? int64_t(1) : int64_t(0));
  ir::Value* y = ctx.emit(ir::OpKind::MatMul, {ctx.input(0), ctx.input(1)}, std::move(attrs));
  const double alpha = ctx.attr_float("alpha", 1.0), beta = ctx.attr_float("beta", 1.0);
  if (alpha != 1.0) y = ctx.emit(ir::OpKind::Mul, {y, ctx.scalar(t, alpha)});
  if (ctx.has_input(2) && beta != 0.0) {
    ir::Value* c = ctx.input(2);
    if (beta != 1.0) c = ctx.emit(ir::OpKind::Mul, {c, ctx.scalar(t, beta)});
    y = ctx.emit(ir::OpKind::Add, {y, c});
  }
  ctx.set_output(0, y);
}

void translate_einsum(ImportContext& ctx) {
  std::string eq;
  for (char c : ctx.attr_string("equation", "")) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  if (int(terms.size()) != ctx.num_inputs())
    ctx.fail("equation '{}' names {} operands, the node has {}", eq, terms.size(), ctx.num_inputs());
  // Ellipsis dims: right-aligned across operands, named by unused letters.
  const std::string spare = free_letters(eq);
  std::vector<int64_t> ell_rank(terms.size(), 0);
  int64_t ell_max = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t pos = terms[i].find("...");
    const int64_t rank = int64_t(ctx.input_type(int(i)).shape.size());
    if (pos == std::string::npos) continue;
    ell_rank[i] = rank - int64_t(terms[i].size() - 3);
    if (ell_rank[i] < 0) ctx.fail("term '{}' has more subscripts than operand {} has dims", terms[i], i);
    ell_max = std::max(ell_max, ell_rank[i]);
  }
  if (ell_max > int64_t(spare.size())) ctx.fail("too many ellipsis dims in '{}'", eq);
  const std::string ell_all = spare.substr(0, size_t(ell_max));
  std::string canon;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t pos = terms[i].find("...");
    if (pos != std::string::npos) terms[i].replace(pos, 3, ell_all.substr(size_t(ell_max - ell_rank[i])));
    canon += (i ? "," : "") + terms[i];
  }
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    const size_t pos = out.find("...");
    if (pos != std::string::npos) out.replace(pos, 3, ell_all);
  } else {
    std::map<char, int> count;
    for (const auto& t : terms)
      for (char c : t) ++count[c];
    out = ell_all;
    for (const auto& [c, n] : count)
      if (n == 1 && ell_all.find(c) == std::string::npos) out += c;
  }
  Attrs attrs;
  attrs.set("equation", canon + "->" + out);
  std::vector<ir::Value*> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  ctx.set_output(0, ctx.emit(ir::OpKind::Einsum, inputs, std::move(attrs)));
}

void translate_conv(ImportContext& ctx) {
  const Shape wk = weight_kernel(ctx);
  Attrs attrs = window_attrs(forward_window(ctx, &wk));
  attrs.set("group", ctx.attr_int("group", 1));
  ctx.set_output(0, ctx.emit(ir::OpKind::Conv, conv_inputs(ctx), std::move(attrs)));
}

void translate_conv_transpose(ImportContext& ctx) {
  const Shape in = spatial_dims(ctx);
  const size_t spatial = in.size();
  const Shape wk = weight_kernel(ctx);
  Window w = read_window(ctx, spatial, &wk);
  Shape opad = ctx.attr_ints("output_padding", Shape(spatial, 0));
  if (opad.size() != spatial) ctx.fail("output_padding must have {} values", spatial);
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  Shape target;  // requested spatial output dims
  if (ctx.has_attr("output_shape")) {
    target = ctx.attr_ints("output_shape");
    if (target.size() == spatial + 2) target.erase(target.begin(), target.begin() + 2);
    if (target.size() != spatial) ctx.fail("output_shape must have {} values", spatial);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < spatial; ++i) target.push_back(in[i] * w.strides[i]);
  } else if (auto_pad == "VALID") {
    std::fill(w.pads.begin(), w.pads.end(), 0);
  } else if (auto_pad != "NOTSET" && !auto_pad.empty()) {
    ctx.fail("unknown auto_pad '{}'", auto_pad);
  }
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t total = w.strides[i] * (in[i] - 1) + opad[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - target[i];
    if (total < 0) {  // the output is larger than the full result: extra rows at the end
      opad[i] -= total;
      total = 0;
    }
    split_padding(w, i, spatial, total, auto_pad == "SAME_UPPER");
  }
  Attrs attrs = window_attrs(w);
  attrs.set("group", ctx.attr_int("group", 1));
  attrs.set("output_padding", opad);
  ctx.set_output(0, ctx.emit(ir::OpKind::ConvTranspose, conv_inputs(ctx), std::move(attrs)));
}

void translate_average_pool(ImportContext& ctx) {
  Attrs attrs = window_attrs(forward_window(ctx, nullptr));
  attrs.set("ceil_mode", ctx.attr_int("ceil_mode", 0));
  attrs.set("count_include_pad", ctx.attr_int("count_include_pad", 0));
  ctx.set_output(0, ctx.emit(ir::OpKind::AveragePool, {ctx.input(0)}, std::move(attrs)));
}

void translate_max_pool(ImportContext& ctx) {
  Attrs attrs = window_attrs(forward_window(ctx, nullptr));
  attrs.set("ceil_mode", ctx.attr_int("ceil_mode", 0));
  attrs.set("storage_order", ctx.attr_int("storage_order", 0));
  auto outs =
      ctx.emit_multi(ir::OpKind::MaxPool, {ctx.input(0)}, std::move(attrs), {true, ctx.has_output(1)});
  ctx.set_output(0, outs[0]);
  if (ctx.has_output(1)) ctx.set_output(1, outs[1]);
}

}  // namespace dlc::frontend
