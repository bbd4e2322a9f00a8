// Shape inference of the nn family: MatMul (numpy semantics), Einsum (canonical equation),
// convolutions and pooling (explicit pads, as resolved by the importer).
#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "dlc/attention.h"
#include "dlc/einsum_equation.h"
#include "ir/infer.h"

namespace dlc::ir {

namespace {

void require_float(const InferContext& ctx, const TensorType& t, const char* what) {
  if (!is_floating(t.dtype)) ctx.fail("{} must be floating-point, got {}", what, t.str());
}

// Spatial window parameters of a conv/pool node, defaulted and checked against `spatial` dims.
struct Window {
  Shape kernel, strides, pads, dilations;
};

Window read_window(const InferContext& ctx, size_t spatial, const Shape* weight_kernel) {
  const Attrs& a = ctx.attrs();
  Window w;
  if (a.has("kernel_shape")) {
    w.kernel = a.ints("kernel_shape");
  } else if (weight_kernel) {
    w.kernel = *weight_kernel;
  } else {
    ctx.fail("attribute 'kernel_shape' is required");
  }
  w.strides = a.ints("strides", Shape(spatial, 1));
  w.pads = a.ints("pads", Shape(2 * spatial, 0));
  w.dilations = a.ints("dilations", Shape(spatial, 1));
  if (w.kernel.size() != spatial || w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial)
    ctx.fail("kernel_shape {} / strides {} / dilations {} / pads {} do not match {} spatial dims",
             shape_str(w.kernel), shape_str(w.strides), shape_str(w.dilations), shape_str(w.pads), spatial);
  for (size_t i = 0; i < spatial; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      ctx.fail("kernel_shape, strides and dilations must be positive");
    if (w.pads[i] < 0 || w.pads[i + spatial] < 0)
      ctx.fail("pads must be non-negative, got {}", shape_str(w.pads));
  }
  if (weight_kernel && w.kernel != *weight_kernel)
    ctx.fail("kernel_shape {} differs from the weight's spatial dims {}", shape_str(w.kernel),
             shape_str(*weight_kernel));
  return w;
}

// The rank >= 3 (N, C, spatial…) activation input.
const TensorType& activation(const InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (x.shape.size() < 3) ctx.fail("input must be N x C x D1…, got {}", x.str());
  return x;
}

void infer_pool(InferContext& ctx) {
  const TensorType& x = activation(ctx);
  const size_t spatial = x.shape.size() - 2;
  Window w = read_window(ctx, spatial, nullptr);
  const bool ceil_mode = ctx.attrs().i("ceil_mode", 0) != 0;
  Shape out = {x.shape[0], x.shape[1]};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = x.shape[i + 2];
    const int64_t span = in + w.pads[i] + w.pads[i + spatial] - ((w.kernel[i] - 1) * w.dilations[i] + 1);
    if (span < 0) ctx.fail("window larger than the padded input {}", x.str());
    int64_t o = (ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
    // As PyTorch: the last window must start inside the input or the left padding.
    if (ceil_mode && (o - 1) * w.strides[i] >= in + w.pads[i]) --o;
    out.push_back(o);
  }
  ctx.outputs[0] = TensorType{x.dtype, out};
}

// Conv and ConvTranspose: x (N, C, D…), w, b? (M); returns the window and checks groups.
Window conv_common(InferContext& ctx, int64_t* group) {
  const TensorType& x = activation(ctx);
  const TensorType& wt = ctx.input(1);
  require_float(ctx, x, "input X");
  if (wt.dtype != x.dtype || wt.shape.size() != x.shape.size())
    ctx.fail("weight {} does not match input {}", wt.str(), x.str());
  *group = ctx.attrs().i("group", 1);
  if (*group < 1 || x.shape[1] % *group != 0)
    ctx.fail("group {} does not divide the {} input channels", *group, x.shape[1]);
  Shape wk(wt.shape.begin() + 2, wt.shape.end());
  return read_window(ctx, x.shape.size() - 2, &wk);
}

// A folded residual epilogue (input 3 of MatMul, Conv, ConvTranspose): the result's type.
void check_residual(InferContext& ctx, const TensorType& result) {
  if (ctx.has_input(3) && ctx.input(3) != result)
    ctx.fail("residual {} must have the result's type {}", ctx.input(3).str(), result.str());
}

void check_bias(InferContext& ctx, int64_t channels) {
  if (!ctx.has_input(2)) return;
  const TensorType& b = ctx.input(2);
  if (b.dtype != ctx.input(0).dtype || b.shape != Shape{channels})
    ctx.fail("bias {} must be a vector of the {} output channels", b.str(), channels);
}

}  // namespace

void infer_MatMul(InferContext& ctx) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  if (a.dtype != b.dtype) ctx.fail("operand dtypes differ: {} and {}", a.str(), b.str());
  if (a.shape.empty() || b.shape.empty())
    ctx.fail("operands must have rank >= 1, got {} and {}", a.str(), b.str());
  const bool ta = ctx.attrs().i("transpose_a", 0) != 0, tb = ctx.attrs().i("transpose_b", 0) != 0;
  if ((ta && a.shape.size() < 2) || (tb && b.shape.size() < 2))
    ctx.fail("transpose of a rank-1 operand: {} and {}", a.str(), b.str());
  Shape sa = a.shape, sb = b.shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const size_t ra = sa.size(), rb = sb.size();
  if (ta) std::swap(sa[ra - 1], sa[ra - 2]);
  if (tb) std::swap(sb[rb - 1], sb[rb - 2]);
  if (sa[ra - 1] != sb[rb - 2]) ctx.fail("inner dimensions differ: {} and {}", a.str(), b.str());
  Shape batch = broadcast_shapes(ctx, Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2));
  if (a.shape.size() > 1) batch.push_back(sa[ra - 2]);
  if (b.shape.size() > 1) batch.push_back(sb[rb - 1]);
  // The fused epilogue: alpha scales the product, the bias broadcasts along the last dim only,
  // the residual has the result's type.
  if ((ctx.attrs().has("alpha") || ctx.has_input(2) || ctx.has_input(3)) && !is_floating(a.dtype))
    ctx.fail("alpha, bias and residual need floating-point operands, got {}", a.str());
  check_activation(ctx);
  if (ctx.has_input(2)) {
    const TensorType& bias = ctx.input(2);
    if (b.shape.size() < 2) ctx.fail("a bias needs a matrix operand b, got {}", b.str());
    const bool last_dim_only =
        !bias.shape.empty() && bias.shape.size() <= batch.size() && bias.shape.back() == batch.back() &&
        std::all_of(bias.shape.begin(), bias.shape.end() - 1, [](int64_t d) { return d == 1; });
    if (bias.dtype != a.dtype || !last_dim_only)
      ctx.fail("bias {} must be {} [n] or [1, …, 1, n] with n the last dim of the result {}", bias.str(),
               dtype_name(a.dtype), shape_str(batch));
  }
  ctx.outputs[0] = TensorType{a.dtype, batch};
  check_residual(ctx, ctx.outputs[0]);
}

void infer_Einsum(InferContext& ctx) {
  const std::string& eq = ctx.attrs().s("equation");
  const std::optional<EinsumEquation> parsed = parse_einsum_equation(eq);
  if (!parsed) ctx.fail("equation '{}' has no explicit output", eq);
  const std::vector<std::string>& terms = parsed->terms;
  const std::string& out = parsed->output;
  if (int(terms.size()) != ctx.num_inputs())
    ctx.fail("equation '{}' has {} operands, the node {}", eq, terms.size(), ctx.num_inputs());
  std::map<char, int64_t> dims;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const TensorType& t = ctx.input(i);
    if (t.dtype != ctx.input(0).dtype)
      ctx.fail("operand dtypes differ: {} and {}", ctx.input(0).str(), t.str());
    if (terms[i].size() != t.shape.size())
      ctx.fail("term '{}' does not match operand {} of type {}", terms[i], i, t.str());
    for (size_t k = 0; k < t.shape.size(); ++k) {
      const char c = terms[i][k];
      if (!std::isalpha(static_cast<unsigned char>(c))) ctx.fail("bad subscript '{}' in '{}'", c, eq);
      auto [it, fresh] = dims.emplace(c, t.shape[k]);
      if (!fresh && it->second != t.shape[k]) {
        // Numpy-style broadcasting of a size-1 dim.
        if (it->second == 1)
          it->second = t.shape[k];
        else if (t.shape[k] != 1)
          ctx.fail("subscript '{}' has sizes {} and {}", c, it->second, t.shape[k]);
      }
    }
  }
  Shape shape;
  for (char c : out) {
    auto it = dims.find(c);
    if (it == dims.end() || std::count(out.begin(), out.end(), c) != 1)
      ctx.fail("output subscript '{}' of '{}' is unknown or repeated", c, eq);
    shape.push_back(it->second);
  }
  ctx.outputs[0] = TensorType{ctx.input(0).dtype, shape};
}

void infer_Conv(InferContext& ctx) {
  int64_t group = 1;
  Window w = conv_common(ctx, &group);
  const TensorType& x = ctx.input(0);
  const TensorType& wt = ctx.input(1);
  if (wt.shape[1] * group != x.shape[1] || wt.shape[0] % group != 0)
    ctx.fail("weight {} does not fit input {} with group {}", wt.str(), x.str(), group);
  check_bias(ctx, wt.shape[0]);
  check_activation(ctx);
  const size_t spatial = x.shape.size() - 2;
  Shape out = {x.shape[0], wt.shape[0]};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t span =
        x.shape[i + 2] + w.pads[i] + w.pads[i + spatial] - ((w.kernel[i] - 1) * w.dilations[i] + 1);
    if (span < 0) ctx.fail("kernel larger than the padded input {}", x.str());
    out.push_back(span / w.strides[i] + 1);
  }
  ctx.outputs[0] = TensorType{x.dtype, out};
  check_residual(ctx, ctx.outputs[0]);
}

void infer_ConvTranspose(InferContext& ctx) {
  int64_t group = 1;
  Window w = conv_common(ctx, &group);
  const TensorType& x = ctx.input(0);
  const TensorType& wt = ctx.input(1);
  if (wt.shape[0] != x.shape[1]) ctx.fail("weight {} does not fit input {}", wt.str(), x.str());
  const size_t spatial = x.shape.size() - 2;
  Shape opad = ctx.attrs().ints("output_padding", Shape(spatial, 0));
  if (opad.size() != spatial) ctx.fail("output_padding {} does not match the input", shape_str(opad));
  check_bias(ctx, wt.shape[1] * group);
  Shape out = {x.shape[0], wt.shape[1] * group};
  for (size_t i = 0; i < spatial; ++i) {
    if (opad[i] < 0) ctx.fail("output_padding must be non-negative");
    const int64_t o = w.strides[i] * (x.shape[i + 2] - 1) + opad[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 -
                      w.pads[i] - w.pads[i + spatial];
    if (o < 1) ctx.fail("pads {} leave no output", shape_str(w.pads));
    out.push_back(o);
  }
  ctx.outputs[0] = TensorType{x.dtype, out};
  check_residual(ctx, ctx.outputs[0]);
}

namespace {

// Attention's operands q [..., S, D], k [..., Sk, D], v [..., Sk, Dv] at inputs first, first + 1
// and first + 2 (seq_major = 1: q [..., S, H, D], k [..., Sk, H, D], v [..., Sk, H, Dv]): one
// float dtype, equal leading dims (and heads). Returns o's type [..., S, Dv] ([..., S, H, Dv]).
TensorType attention_result(const InferContext& ctx, int first) {
  const TensorType &q = ctx.input(first), &k = ctx.input(first + 1), &v = ctx.input(first + 2);
  if (!is_floating(q.dtype) || k.dtype != q.dtype || v.dtype != q.dtype)
    ctx.fail("q {}, k {} and v {} must be floats of one dtype", q.str(), k.str(), v.str());
  const bool seq_major = attention_seq_major(ctx.attrs());
  const size_t r = q.shape.size(), seq = seq_major ? r - 3 : r - 2;  // the rows' axis
  if (r < (seq_major ? 3u : 2u) || k.shape.size() != r || v.shape.size() != r ||
      !std::equal(q.shape.begin(), q.shape.begin() + seq, k.shape.begin()) ||
      !std::equal(q.shape.begin(), q.shape.begin() + seq, v.shape.begin()))
    ctx.fail("q {}, k {} and v {} must have one rank >= {} and equal leading dims", q.str(), k.str(), v.str(),
             seq_major ? 3 : 2);
  const bool heads_match =
      !seq_major || (k.shape[r - 2] == q.shape[r - 2] && v.shape[r - 2] == q.shape[r - 2]);
  if (k.shape[r - 1] != q.shape[r - 1] || v.shape[seq] != k.shape[seq] || !heads_match) {
    if (seq_major)
      ctx.fail("k {} must be [..., Sk, H, D] and v {} [..., Sk, H, Dv] for q {} [..., S, H, D]", k.str(),
               v.str(), q.str());
    ctx.fail("k {} must be [..., Sk, D] and v {} [..., Sk, Dv] for q {} [..., S, D]", k.str(), v.str(),
             q.str());
  }
  Shape o = q.shape;
  o.back() = v.shape.back();
  return TensorType{q.dtype, o};
}

// lse's type: f32 [..., S] for a result o [..., S, Dv], or [..., H, S] for a seq-major o
// [..., S, H, Dv].
TensorType attention_lse(const InferContext& ctx, const TensorType& o) {
  Shape lse(o.shape.begin(), o.shape.end() - 1);
  if (attention_seq_major(ctx.attrs())) std::swap(lse[lse.size() - 1], lse[lse.size() - 2]);
  return TensorType{DType::F32, lse};
}

}  // namespace

void infer_Attention(InferContext& ctx) {
  ctx.outputs[0] = attention_result(ctx, 0);
  if (ctx.num_outputs() > 1) ctx.outputs[1] = attention_lse(ctx, ctx.outputs[0]);
}

// Beside the forward's, whose checks it shares.
void infer_AttentionGrad(InferContext& ctx) {
  const TensorType o = attention_result(ctx, 1);
  if (ctx.input(0) != o || ctx.input(4) != o)
    ctx.fail("do {} and o {} must be {} (the result of the forward)", ctx.input(0).str(), ctx.input(4).str(),
             o.str());
  if (ctx.input(5) != attention_lse(ctx, o))
    ctx.fail("lse {} must be {}", ctx.input(5).str(), attention_lse(ctx, o).str());
  for (int i = 0; i < 3; ++i) ctx.outputs[i] = ctx.input(1 + i);
}

void infer_AveragePool(InferContext& ctx) {
  require_float(ctx, ctx.input(0), "input X");
  infer_pool(ctx);
}

void infer_MaxPool(InferContext& ctx) {
  infer_pool(ctx);
  if (ctx.num_outputs() > 1) ctx.outputs[1] = TensorType{DType::I64, ctx.outputs[0].shape};
}

}  // namespace dlc::ir
