// CPU Conv and ConvTranspose on oneDNN (convolution_forward / deconvolution_forward), 1-D to
// 3-D, grouped, with explicit pads; the primitive is built once per step and cached.
#include <algorithm>

#include "runtime/cpu/kernel.h"
#include "runtime/cpu/onednn.h"

namespace dlc::cpu {

namespace {

using dnnl::memory;

// Window attributes in oneDNN's terms (dilation counted from 0, right padding separate).
struct ConvParams {
  memory::dims strides, dilates, pad_l, pad_r;
  int64_t group = 1;
};

ConvParams conv_params(const KernelContext& ctx, bool transposed) {
  const size_t spatial = ctx.inputs[0].dims.size() - 2;
  const Attrs& a = ctx.attrs;
  Shape strides = a.ints("strides", Shape(spatial, 1));
  Shape pads = a.ints("pads", Shape(2 * spatial, 0));
  Shape dil = a.ints("dilations", Shape(spatial, 1));
  Shape opad = transposed ? a.ints("output_padding", Shape(spatial, 0)) : Shape(spatial, 0);
  if (strides.size() != spatial || pads.size() != 2 * spatial || dil.size() != spatial ||
      opad.size() != spatial)
    ctx.fail("window attributes do not match the input {}", shape_str(ctx.inputs[0].dims));
  ConvParams p;
  p.group = a.i("group", 1);
  for (size_t i = 0; i < spatial; ++i) {
    p.strides.push_back(strides[i]);
    p.dilates.push_back(dil[i] - 1);
    p.pad_l.push_back(pads[i]);
    // output_padding adds rows at the end: a negative right padding for the deconvolution.
    p.pad_r.push_back(pads[i + spatial] - opad[i]);
  }
  return p;
}

// The ONNX weight as oneDNN's logical (g?, OC/g, IC/g, k…) weights. Conv stores (OC, IC/g, k…);
// ConvTranspose stores (IC, OC/g, k…), i.e. input and output channels swapped.
memory::desc weight_desc(const TensorView& w, int64_t group, bool transposed) {
  Shape dims = w.dims;
  if (group > 1) {
    dims[0] /= group;
    dims.insert(dims.begin(), group);
  }
  Shape st = onednn::row_major_strides(dims);
  if (transposed) {
    const size_t o = group > 1 ? 1 : 0;
    std::swap(dims[o], dims[o + 1]);
    std::swap(st[o], st[o + 1]);
  }
  return onednn::strided_desc(dims, st, w.dtype);
}

template <typename Desc, typename PrimDesc, typename Prim>
onednn::PrimitiveState build(const KernelContext& ctx, bool transposed, dnnl::algorithm alg) {
  using namespace onednn;
  const TensorView &x = ctx.inputs[0], &w = ctx.inputs[1], &y = ctx.outputs[0];
  const ConvParams p = conv_params(ctx, transposed);
  const memory::desc x_user = plain_desc(x.dims, x.dtype), y_user = plain_desc(y.dims, y.dtype);
  const memory::desc w_user = weight_desc(w, p.group, transposed);
  auto any = [](const memory::desc& d) {
    return memory::desc(d.dims(), d.data_type(), memory::format_tag::any);
  };
  const auto prop = dnnl::prop_kind::forward_inference;
  PrimitiveState st;
  const bool bias = ctx.has_input(2);
  const memory::desc b_user = bias ? plain_desc(ctx.inputs[2].dims, x.dtype) : memory::desc();
  Desc d =
      bias ? Desc(prop, alg, any(x_user), any(w_user), b_user, any(y_user), p.strides, p.dilates, p.pad_l,
                  p.pad_r)
           : Desc(prop, alg, any(x_user), any(w_user), any(y_user), p.strides, p.dilates, p.pad_l, p.pad_r);
  PrimDesc pd(d, engine());
  st.prim = Prim(pd);
  st.args[DNNL_ARG_SRC] = Arg(x_user, pd.src_desc());
  st.args[DNNL_ARG_WEIGHTS] = Arg(w_user, pd.weights_desc());
  st.args[DNNL_ARG_DST] = Arg(y_user, pd.dst_desc());
  if (bias) st.args[DNNL_ARG_BIAS] = Arg(b_user, pd.bias_desc());
  return st;
}

template <typename Desc, typename PrimDesc, typename Prim>
void run_conv(KernelContext& ctx, bool transposed, dnnl::algorithm alg) {
  if (ctx.inputs[0].dtype != DType::F32)
    ctx.fail("dtype {} is not supported", dtype_name(ctx.inputs[0].dtype));
  if (ctx.outputs[0].numel() == 0) return;
  std::unique_ptr<KernelState> local;
  try {
    auto& st = onednn::cached_state<onednn::PrimitiveState>(
        ctx, local, [&] { return build<Desc, PrimDesc, Prim>(ctx, transposed, alg); });
    const void* bias = ctx.has_input(2) ? ctx.inputs[2].data : nullptr;
    onednn::execute(
        st,
        {{DNNL_ARG_SRC, ctx.inputs[0].data}, {DNNL_ARG_WEIGHTS, ctx.inputs[1].data}, {DNNL_ARG_BIAS, bias}},
        {{DNNL_ARG_DST, ctx.outputs[0].data}});
  } catch (const dnnl::error& e) {
    ctx.fail("{} (input {}, weight {}, output {})", onednn::describe(e), shape_str(ctx.inputs[0].dims),
             shape_str(ctx.inputs[1].dims), shape_str(ctx.outputs[0].dims));
  }
}

}  // namespace

void kernel_Conv(KernelContext& ctx) {
  run_conv<dnnl::convolution_forward::desc, dnnl::convolution_forward::primitive_desc,
           dnnl::convolution_forward>(ctx, false, dnnl::algorithm::convolution_direct);
}

void kernel_ConvTranspose(KernelContext& ctx) {
  run_conv<dnnl::deconvolution_forward::desc, dnnl::deconvolution_forward::primitive_desc,
           dnnl::deconvolution_forward>(ctx, true, dnnl::algorithm::deconvolution_direct);
}

}  // namespace dlc::cpu
