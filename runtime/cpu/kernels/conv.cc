// CPU Conv and ConvTranspose on oneDNN (convolution_forward / deconvolution_forward), 1-D to
// 3-D, grouped, with explicit pads; the primitive is built once per step and cached, with the
// memory formats oneDNN prefers (reorders around it) except for a plain input with few channels.
// The folded epilogues, a residual (input 3) and Conv's Relu (attribute `activation`), are
// applied to the stored result (cpu/epilogue.h: oneDNN's relu post-op loses NaN).
#include <string_view>

#include "runtime/cpu/channels_first.h"
#include "runtime/cpu/conv_window.h"
#include "runtime/cpu/epilogue.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

using dnnl::memory;

template <typename Desc, typename PrimDesc, typename Prim>
onednn::PrimitiveState build(const KernelContext& ctx, bool transposed, dnnl::algorithm alg) {
  using namespace onednn;
  const TensorView &x = ctx.inputs[0], &w = ctx.inputs[1], &y = ctx.outputs[0];
  const ConvWindow p = conv_window(ctx, transposed);
  const memory::desc x_user = plain_desc(x.dims, x.dtype), y_user = plain_desc(y.dims, y.dtype);
  const memory::desc w_user = conv_weight_desc(w.dims, w.dtype, p.group, transposed);
  const auto prop = dnnl::prop_kind::forward_inference;
  PrimitiveState st;
  const bool bias = ctx.has_input(2);
  const memory::desc b_user = bias ? plain_desc(ctx.inputs[2].dims, x.dtype) : memory::desc();
  auto make = [&](const memory::desc& src, const memory::desc& dst) {
    return PrimDesc(
        bias ? Desc(prop, alg, src, any_format(w_user), b_user, dst, p.strides, p.dilates, p.pad_l, p.pad_r)
             : Desc(prop, alg, src, any_format(w_user), dst, p.strides, p.dilates, p.pad_l, p.pad_r),
        engine());
  };
  PrimDesc pd = make(any_format(x_user), any_format(y_user));
  // Whether oneDNN implements `d` with a kernel whose name starts with `prefix` ("jit:", "jit_1x1:", …).
  const auto impl_is = [](const PrimDesc& d, std::string_view prefix) {
    return std::string_view(d.impl_info_str()).rfind(prefix, 0) == 0;
  };
  // With fewer input channels per group than a 16-channel block, oneDNN's direct JIT kernels
  // read the plain input faster than the blocked or NHWC kernels that `any` picks run after
  // reordering it (the parity CNN's 1- and 8-channel convolutions); keep `any` where only gemm
  // or a reference kernel takes the plain input.
  if (!transposed && x.dims[1] / p.group < 16) {
    PrimDesc plain = make(x_user, any_format(y_user));
    if (impl_is(plain, "jit:")) pd = plain;
  } else if (!transposed && x.dims[1] % 16 == 0 && y.dims[1] % 16 == 0) {
    // Where both channel counts fill 16-channel blocks, the JIT kernels on the blocked format
    // against the NHWC brgconv that `any` picks (oneDNN 2.6, AVX-512, 2 threads, reorders from and
    // to the plain tensors included; dlc_bench_conv_formats): 3x3 convolutions within 4% either
    // way (the main job's 32 -> 64 channels 4-12% faster), 1x1 ones 1.25-1.7x faster (NHWC's
    // reorders cost up to twice the blocked ones); ResNet-50's forward at batch 8, 475 -> 397 ms.
    PrimDesc blocked = make(channel_blocked16(x_user), channel_blocked16(y_user));
    if (impl_is(blocked, "jit")) pd = blocked;
  }
  st.prim = Prim(pd);
  st.args[DNNL_ARG_SRC] = Arg(x_user, pd.src_desc());
  st.args[DNNL_ARG_WEIGHTS] = Arg(w_user, pd.weights_desc());
  st.args[DNNL_ARG_DST] = Arg(y_user, pd.dst_desc());
  if (bias) st.args[DNNL_ARG_BIAS] = Arg(b_user, pd.bias_desc());
  return st;
}

template <typename Desc, typename PrimDesc, typename Prim>
void run_conv(const KernelContext& ctx, bool transposed, dnnl::algorithm alg) {
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
    const float* residual = ctx.has_input(3) ? ctx.inputs[3].as<float>() : nullptr;
    apply_epilogue(ctx.outputs[0].as<float>(), residual, relu_epilogue(ctx), ctx.outputs[0].numel());
  } catch (const dnnl::error& e) {
    ctx.fail("{} (input {}, weight {}, output {})", onednn::describe(e), shape_str(ctx.inputs[0].dims),
             shape_str(ctx.inputs[1].dims), shape_str(ctx.outputs[0].dims));
  }
}

}  // namespace

void kernel_Conv(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_Conv)) return;
  if (run_widened(ctx, kernel_Conv)) return;
  run_conv<dnnl::convolution_forward::desc, dnnl::convolution_forward::primitive_desc,
           dnnl::convolution_forward>(ctx, false, dnnl::algorithm::convolution_direct);
}

void kernel_ConvTranspose(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_ConvTranspose)) return;
  if (run_widened(ctx, kernel_ConvTranspose)) return;
  run_conv<dnnl::deconvolution_forward::desc, dnnl::deconvolution_forward::primitive_desc,
           dnnl::deconvolution_forward>(ctx, true, dnnl::algorithm::deconvolution_direct);
}

}  // namespace dlc::cpu
