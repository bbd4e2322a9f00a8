// ConvGradFilter on oneDNN's convolution_backward_weights: dw from dy and x, with the forward
// Conv's window attributes, and with a second output the bias gradient db (oneDNN's diff_bias:
// dy summed over the batch and spatial axes, in oneDNN's order, in f32). (The data gradient needs
// no kernel: it is a ConvTranspose.)
#include "runtime/cpu/channels_first.h"
#include "runtime/cpu/conv_window.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

using dnnl::memory;

onednn::PrimitiveState build_conv_grad_filter(const KernelContext& ctx) {
  using namespace onednn;
  const TensorView &dy = ctx.inputs[0], &x = ctx.inputs[1], &dw = ctx.outputs[0];
  const ConvWindow p = conv_window(ctx, false);
  const memory::desc x_user = plain_desc(x.dims, x.dtype), dy_user = plain_desc(dy.dims, dy.dtype);
  const memory::desc w_user = conv_weight_desc(dw.dims, dw.dtype, p.group, false);
  const bool bias = ctx.has_output(1);
  const memory::desc b_user = bias ? plain_desc(ctx.outputs[1].dims, dy.dtype) : memory::desc();
  const auto alg = dnnl::algorithm::convolution_direct;
  const memory::desc x_any = any_format(x_user), w_any = any_format(w_user), dy_any = any_format(dy_user);
  using Fwd = dnnl::convolution_forward;
  using Bwd = dnnl::convolution_backward_weights;
  const auto prop = dnnl::prop_kind::forward_training;
  Fwd::primitive_desc fwd(
      bias ? Fwd::desc(prop, alg, x_any, w_any, b_user, dy_any, p.strides, p.dilates, p.pad_l, p.pad_r)
           : Fwd::desc(prop, alg, x_any, w_any, dy_any, p.strides, p.dilates, p.pad_l, p.pad_r),
      engine());
  Bwd::primitive_desc pd(
      bias ? Bwd::desc(alg, x_any, w_any, b_user, dy_any, p.strides, p.dilates, p.pad_l, p.pad_r)
           : Bwd::desc(alg, x_any, w_any, dy_any, p.strides, p.dilates, p.pad_l, p.pad_r),
      engine(), fwd);
  PrimitiveState s;
  s.prim = Bwd(pd);
  s.args[DNNL_ARG_SRC] = Arg(x_user, pd.src_desc());
  s.args[DNNL_ARG_DIFF_DST] = Arg(dy_user, pd.diff_dst_desc());
  s.args[DNNL_ARG_DIFF_WEIGHTS] = Arg(w_user, pd.diff_weights_desc());
  if (bias) s.args[DNNL_ARG_DIFF_BIAS] = Arg(b_user, pd.diff_bias_desc());
  return s;
}

}  // namespace

void kernel_ConvGradFilter(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_ConvGradFilter)) return;
  if (run_widened(ctx, kernel_ConvGradFilter)) return;
  if (ctx.inputs[1].dtype != DType::F32)
    ctx.fail("dtype {} is not supported", dtype_name(ctx.inputs[1].dtype));
  std::unique_ptr<KernelState> local;
  try {
    auto& st =
        onednn::cached_state<onednn::PrimitiveState>(ctx, local, [&] { return build_conv_grad_filter(ctx); });
    void* db = ctx.has_output(1) ? ctx.outputs[1].data : nullptr;
    onednn::execute(st, {{DNNL_ARG_SRC, ctx.inputs[1].data}, {DNNL_ARG_DIFF_DST, ctx.inputs[0].data}},
                    {{DNNL_ARG_DIFF_WEIGHTS, ctx.outputs[0].data}, {DNNL_ARG_DIFF_BIAS, db}});
  } catch (const dnnl::error& e) {
    ctx.fail("{} (dy {}, x {})", onednn::describe(e), shape_str(ctx.inputs[0].dims),
             shape_str(ctx.inputs[1].dims));
  }
}

}  // namespace dlc::cpu
