// CPU kernels of the norm family: batch/instance/layer normalization (statistics accumulated in
// double), Philox dropout, and the NLL / softmax cross-entropy losses.
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/cpu/broadcast.h"
#include "runtime/cpu/channel_dims.h"
#include "runtime/cpu/channels_first.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/epilogue.h"
#include "runtime/cpu/indices.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/moments.h"
#include "runtime/cpu/philox.h"
#include "runtime/cpu/simd_math.h"
#include "runtime/cpu/softmax.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

// y = x * a + b over a contiguous segment, then relu_value(y) when `relu`.
template <typename T>
void affine(const T* x, T* y, int64_t n, double a, double b, bool relu = false) {
  const T fa = T(a), fb = T(b);
  if (relu) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = relu_value(x[i] * fa + fb);
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * fa + fb;
}

// The moments of channel c of x [N, C, S]. Cloned for AVX2/AVX-512 (the double sums run 4 or 8
// wide); throws nothing (a DLC_SIMD_CLONES function must not).
template <typename T>
DLC_SIMD_CLONES Moments channel_moments(const T* x, const ChannelDims& dims, int64_t c) {
  Moments mo;
  for (int64_t n = 0; n < dims.n; ++n) mo.add(x + (n * dims.c + c) * dims.spatial, dims.spatial);
  return mo;
}

template <typename T>
void batch_norm(const KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const ChannelDims dims = channel_dims(xv.dims);
  const int64_t N = dims.n, C = dims.c, S = dims.spatial;
  const T* x = xv.as<T>();
  const T* scale = ctx.inputs[1].as<T>();
  const T* bias = ctx.inputs[2].as<T>();
  const T* mean = ctx.inputs[3].as<T>();
  const T* var = ctx.inputs[4].as<T>();
  T* y = ctx.outputs[0].as<T>();
  const double eps = ctx.attrs.f("epsilon", 1e-5);
  const bool training = ctx.attrs.i("training_mode", 0) != 0;
  const bool relu = relu_epilogue(ctx);  // a folded Relu of y
  const double momentum = ctx.attrs.f("momentum", 0.9);
  // ONNX updates running_var with the biased batch variance; PyTorch (dlc's own training) with
  // the unbiased one, n/(n-1) times larger.
  const int64_t count = N * S;
  const double running_var_scale =
      ctx.attrs.i("running_var_unbiased", 0) != 0 && count > 1 ? double(count) / double(count - 1) : 1.0;

  // Per channel y = x * a[c] + b[c], with the running or the batch statistics.
  std::vector<double> a(static_cast<size_t>(C)), b(static_cast<size_t>(C));
#pragma omp parallel for schedule(static) if (training && N * C * S > 32768)
  for (int64_t c = 0; c < C; ++c) {
    double m = double(mean[c]), v = double(var[c]);
    if (training) {
      const Moments mo = channel_moments(x, dims, c);
      m = mo.mean();
      v = mo.variance();
      if (ctx.has_output(1)) ctx.outputs[1].as<T>()[c] = T(momentum * double(mean[c]) + (1 - momentum) * m);
      if (ctx.has_output(2))
        ctx.outputs[2].as<T>()[c] = T(momentum * double(var[c]) + (1 - momentum) * v * running_var_scale);
    }
    a[size_t(c)] = double(scale[c]) / std::sqrt(v + eps);
    b[size_t(c)] = double(bias[c]) - m * a[size_t(c)];
  }
#pragma omp parallel for collapse(2) schedule(static) if (N * C * S > 32768)
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t off = (n * C + c) * S;
      affine(x + off, y + off, S, a[size_t(c)], b[size_t(c)], relu);
    }
}

template <typename T>
void instance_norm(const KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const ChannelDims dims = channel_dims(xv.dims);
  const int64_t NC = dims.n * dims.c, C = dims.c, S = dims.spatial;
  const T* x = xv.as<T>();
  const T* scale = ctx.inputs[1].as<T>();
  const T* bias = ctx.inputs[2].as<T>();
  T* y = ctx.outputs[0].as<T>();
  const double eps = ctx.attrs.f("epsilon", 1e-5);
#pragma omp parallel for schedule(static) if (NC * S > 32768)
  for (int64_t nc = 0; nc < NC; ++nc) {
    Moments mo;
    mo.add(x + nc * S, S);
    const double a = double(scale[nc % C]) / std::sqrt(mo.variance() + eps);
    affine(x + nc * S, y + nc * S, S, a, double(bias[nc % C]) - mo.mean() * a);
  }
}

// `v` (broadcastable to `shape`) expanded to num_elements(shape) values.
template <typename T>
std::vector<double> expand_to(const TensorView& v, const Shape& shape) {
  std::vector<double> out(size_t(num_elements(shape)));
  const T* src = v.as<T>();
  for_each_broadcast_row<1>(shape, {&v.dims}, [&](int64_t o, auto off, auto stride, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[size_t(o + i)] = double(src[off[0] + i * stride[0]]);
  });
  return out;
}

// The rows of LayerNormalization: y = (x - mean) * inv_std * scale + bias over each row of D
// values, the statistics stored when mean_out / inv_std_out are given. Throws nothing (a
// DLC_SIMD_CLONES function must not).
template <typename T, typename U>
DLC_SIMD_CLONES void layer_norm_rows(const T* x, T* y, const double* scale, const double* bias, double eps,
                                     int64_t rows, int64_t D, U* mean_out, U* inv_std_out) {
#pragma omp parallel for schedule(static) if (rows * D > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    Moments mo;
    mo.add(x + r * D, D);
    const double m = mo.mean(), inv_std = 1.0 / std::sqrt(mo.variance() + eps);
    const T* xr = x + r * D;
    T* yr = y + r * D;
#pragma omp simd
    for (int64_t i = 0; i < D; ++i) yr[i] = T((double(xr[i]) - m) * inv_std * scale[i] + bias[i]);
    if (mean_out) mean_out[r] = U(m);
    if (inv_std_out) inv_std_out[r] = U(inv_std);
  }
}

template <typename T, typename U>
void layer_norm(const KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const int64_t rank = xv.rank();
  int64_t axis = ctx.attrs.i("axis", -1);
  if (axis < 0) axis += rank;
  const Shape normalized(xv.dims.begin() + axis, xv.dims.end());
  const int64_t D = num_elements(normalized);
  const int64_t rows = D ? xv.numel() / D : 0;
  const std::vector<double> scale = expand_to<T>(ctx.inputs[1], normalized);
  const std::vector<double> bias =
      ctx.has_input(2) ? expand_to<T>(ctx.inputs[2], normalized) : std::vector<double>(size_t(D), 0.0);
  layer_norm_rows(xv.as<T>(), ctx.outputs[0].as<T>(), scale.data(), bias.data(), ctx.attrs.f("epsilon", 1e-5),
                  rows, D, ctx.has_output(1) ? ctx.outputs[1].as<U>() : nullptr,
                  ctx.has_output(2) ? ctx.outputs[2].as<U>() : nullptr);
}

// The value of a numeric scalar operand, truncated to an integer.
int64_t integer_value(const KernelContext& ctx, const TensorView& v) {
  int64_t out = 0;
  dispatch_numeric(v.dtype, ctx, [&](auto tag) { out = int64_t(*v.as<typename decltype(tag)::type>()); });
  return out;
}

template <typename T>
void dropout(const KernelContext& ctx) {
  const TensorView& xv = ctx.inputs[0];
  const int64_t n = xv.numel();
  const T* x = xv.as<T>();
  T* y = ctx.outputs[0].as<T>();
  bool* mask = ctx.has_output(1) ? ctx.outputs[1].as<bool>() : nullptr;
  const float ratio = float(ctx.attrs.f("ratio", 0.5));
  const T scale = T(1.0 / (1.0 - double(ratio)));
  const uint64_t seed = uint64_t(ctx.attrs.i("seed", 0));
  const uint64_t offset = ctx.has_input(1) ? uint64_t(integer_value(ctx, ctx.inputs[1])) : 0;
  const int64_t blocks = (n + 3) / 4;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const rng::Philox4x32Block bits = rng::philox_block(seed, uint64_t(blk), offset);
    const int64_t end = std::min(n, blk * 4 + 4);
    for (int64_t i = blk * 4; i < end; ++i) {
      const bool keep = rng::uniform_from_bits(bits.v[i - blk * 4]) >= ratio;
      y[i] = keep ? x[i] * scale : T(0);
      if (mask) mask[i] = keep;
    }
  }
}

// Negative log-likelihood over log-probabilities `logp` [N, C, D] (D: the flattened d1, d2, …)
// with the node's target, optional weight and reduction; writes ctx.outputs[0].
template <typename T>
void nll_loss(const KernelContext& ctx, const T* logp) {
  const TensorView& in = ctx.inputs[0];
  const ChannelDims dims = channel_dims(in.dims);
  const int64_t N = dims.n, C = dims.c, D = dims.spatial;
  const std::vector<int64_t> target = read_indices(ctx, ctx.inputs[1], "target");
  const T* weight = ctx.has_input(2) ? ctx.inputs[2].as<T>() : nullptr;
  const bool has_ignore = ctx.attrs.has("ignore_index");
  const int64_t ignore = has_ignore ? ctx.attrs.i("ignore_index") : 0;
  for (size_t i = 0; i < target.size(); ++i)
    if (!(has_ignore && target[i] == ignore) && (target[i] < 0 || target[i] >= C))
      ctx.fail("target[{}] = {} is outside the {} classes", i, target[i], C);
  const std::string reduction = ctx.attrs.s("reduction", "mean");
  T* out = ctx.outputs[0].as<T>();
  const bool per_position = reduction == "none";
  const int64_t positions = N * D;
  double loss_sum = 0, weight_sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : loss_sum, weight_sum) if (positions > 32768)
  for (int64_t p = 0; p < positions; ++p) {
    const int64_t t = target[size_t(p)];
    double loss = 0, w = 0;
    if (!(has_ignore && t == ignore)) {
      w = weight ? double(weight[t]) : 1.0;
      loss = -double(logp[((p / D) * C + t) * D + p % D]) * w;
    }
    if (per_position) out[p] = T(loss);
    loss_sum += loss;
    weight_sum += w;
  }
  if (reduction == "sum")
    *out = T(loss_sum);
  else if (reduction == "mean")
    *out = T(loss_sum / weight_sum);
  else if (!per_position)
    ctx.fail("unknown reduction '{}'", reduction);
}

template <typename T>
void softmax_cross_entropy(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  const ChannelDims dims = channel_dims(in.dims);
  std::vector<T> scratch(ctx.has_output(1) ? 0 : size_t(in.numel()));
  T* lp = ctx.has_output(1) ? ctx.outputs[1].as<T>() : scratch.data();
  softmax_along<true>(in.as<T>(), lp, dims.n, dims.c, dims.spatial);  // LogSoftmax over axis 1
  nll_loss<T>(ctx, lp);
}

}  // namespace

void kernel_BatchNormalization(const KernelContext& ctx) {
  if (run_channels_first(ctx, kernel_BatchNormalization)) return;
  // Mixed precision's half data with f32 parameters and statistics: computed in f32.
  if (is_half(ctx.inputs[0].dtype) && ctx.inputs[1].dtype == DType::F32 &&
      run_widened(ctx, kernel_BatchNormalization))
    return;
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) { batch_norm<typename decltype(tag)::type>(ctx); });
}

void kernel_InstanceNormalization(const KernelContext& ctx) {
  dispatch_float(ctx.inputs[0].dtype, ctx,
                 [&](auto tag) { instance_norm<typename decltype(tag)::type>(ctx); });
}

void kernel_LayerNormalization(const KernelContext& ctx) {
  // Mixed precision's half y of an f32 x: computed in f32, y rounded.
  if (ctx.outputs[0].dtype != ctx.inputs[0].dtype && run_widened(ctx, kernel_LayerNormalization)) return;
  const DType stats = ctx.has_output(1)   ? ctx.outputs[1].dtype
                      : ctx.has_output(2) ? ctx.outputs[2].dtype
                                          : DType::F32;
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto x_tag) {
    dispatch_float(stats, ctx, [&](auto stats_tag) {
      layer_norm<typename decltype(x_tag)::type, typename decltype(stats_tag)::type>(ctx);
    });
  });
}

void kernel_Dropout(const KernelContext& ctx) {
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) { dropout<typename decltype(tag)::type>(ctx); });
}

void kernel_NegativeLogLikelihoodLoss(const KernelContext& ctx) {
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    nll_loss<T>(ctx, ctx.inputs[0].as<T>());
  });
}

void kernel_SoftmaxCrossEntropyLoss(const KernelContext& ctx) {
  dispatch_float(ctx.inputs[0].dtype, ctx,
                 [&](auto tag) { softmax_cross_entropy<typename decltype(tag)::type>(ctx); });
}

}  // namespace dlc::cpu
