// CPU kernels of the training ops: activation/loss/pooling/normalization gradients and the
// optimizer updates (f32; SGD, Adam/AdamW, RMSprop with PyTorch's formulas). ConvGradFilter
// lives with the other convolutions in conv.cc.
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

namespace {

void require_f32(const KernelContext& ctx) {
  for (const TensorView& v : ctx.inputs)
    if (v.data && is_floating(v.dtype) && v.dtype != DType::F32)
      ctx.fail("dtype {} is not supported", dtype_name(v.dtype));
}

// (outer, channels, inner) view of [N, C, d1, …].
struct ChannelLayout {
  int64_t n, c, inner;
  explicit ChannelLayout(const Shape& d)
      : n(d[0]), c(d[1]), inner(num_elements(d) / std::max<int64_t>(d[0] * d[1], 1)) {}
};

}  // namespace

void kernel_ReluGrad(KernelContext& ctx) {
  require_f32(ctx);
  const float* dy = ctx.inputs[0].as<float>();
  const float* y = ctx.inputs[1].as<float>();
  float* dx = ctx.outputs[0].as<float>();
  const int64_t n = ctx.outputs[0].numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.f ? dy[i] : 0.f;
}

void kernel_SoftmaxCrossEntropyGrad(KernelContext& ctx) {
  require_f32(ctx);
  const TensorView& scores = ctx.inputs[1];
  const TensorView& labels = ctx.inputs[2];
  const ChannelLayout l(scores.dims);
  const std::string reduction = ctx.attrs.s("reduction", "mean");
  const int64_t ignore = ctx.attrs.i("ignore_index", std::numeric_limits<int64_t>::min());
  auto label_at = [&](int64_t i) {
    return labels.dtype == DType::I32 ? int64_t(labels.as<int32_t>()[i]) : labels.as<int64_t>()[i];
  };
  const int64_t positions = l.n * l.inner;
  int64_t counted = 0;
  for (int64_t i = 0; i < positions; ++i) counted += label_at(i) != ignore;
  const float* dloss = ctx.inputs[0].as<float>();
  const float scale = reduction == "mean" ? (counted ? 1.f / float(counted) : 0.f) : 1.f;
  const float* x = scores.as<float>();
  float* dx = ctx.outputs[0].as<float>();
#pragma omp parallel for schedule(static) if (positions * l.c > 65536)
  for (int64_t p = 0; p < positions; ++p) {
    const int64_t b = p / l.inner, s = p % l.inner;
    const float* xp = x + b * l.c * l.inner + s;
    float* dp = dx + b * l.c * l.inner + s;
    const int64_t label = label_at(p);
    if (label == ignore) {
      for (int64_t c = 0; c < l.c; ++c) dp[c * l.inner] = 0.f;
      continue;
    }
    if (label < 0 || label >= l.c) ctx.fail("label {} is outside [0, {})", label, l.c);
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < l.c; ++c) mx = std::max(mx, xp[c * l.inner]);
    double sum = 0;
    for (int64_t c = 0; c < l.c; ++c) sum += std::exp(double(xp[c * l.inner] - mx));
    const float g = (reduction == "none" ? dloss[p] : dloss[0]) * scale;
    for (int64_t c = 0; c < l.c; ++c) {
      const float prob = float(std::exp(double(xp[c * l.inner] - mx)) / sum);
      dp[c * l.inner] = g * (prob - (c == label ? 1.f : 0.f));
    }
  }
}

void kernel_MaxPoolGrad(KernelContext& ctx) {
  require_f32(ctx);
  const TensorView& dy = ctx.inputs[0];
  const TensorView& x = ctx.inputs[1];
  const size_t spatial = x.dims.size() - 2;
  const Shape k = ctx.attrs.ints("kernel_shape");
  const Shape strides = ctx.attrs.ints("strides", Shape(spatial, 1));
  const Shape pads = ctx.attrs.ints("pads", Shape(2 * spatial, 0));
  const Shape dil = ctx.attrs.ints("dilations", Shape(spatial, 1));
  if (k.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial || dil.size() != spatial)
    ctx.fail("window attributes do not match the input {}", shape_str(x.dims));
  const Shape in(x.dims.begin() + 2, x.dims.end()), out(dy.dims.begin() + 2, dy.dims.end());
  const int64_t in_size = num_elements(in), out_size = num_elements(out), win = num_elements(k);
  const int64_t planes = x.dims[0] * x.dims[1];
  float* dx = ctx.outputs[0].as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x.as<float>() + p * in_size;
    const float* dyp = dy.as<float>() + p * out_size;
    float* dxp = dx + p * in_size;
    std::fill(dxp, dxp + in_size, 0.f);
    std::vector<int64_t> o(spatial), w(spatial);
    for (int64_t oi = 0; oi < out_size; ++oi) {
      for (int64_t r = oi, d = int64_t(spatial) - 1; d >= 0; --d) o[d] = r % out[d], r /= out[d];
      int64_t best = -1;
      float best_v = -std::numeric_limits<float>::infinity();
      for (int64_t wi = 0; wi < win; ++wi) {
        for (int64_t r = wi, d = int64_t(spatial) - 1; d >= 0; --d) w[d] = r % k[d], r /= k[d];
        int64_t idx = 0;
        bool inside = true;
        for (size_t d = 0; d < spatial && inside; ++d) {
          const int64_t pos = o[d] * strides[d] - pads[d] + w[d] * dil[d];
          inside = pos >= 0 && pos < in[d];
          idx = idx * in[d] + pos;
        }
        if (inside && (best < 0 || xp[idx] > best_v)) best = idx, best_v = xp[idx];
      }
      if (best >= 0) dxp[best] += dyp[oi];
    }
  }
}

void kernel_BatchNormGrad(KernelContext& ctx) {
  require_f32(ctx);
  const TensorView& dy = ctx.inputs[0];
  const TensorView& x = ctx.inputs[1];
  const float* scale = ctx.inputs[2].as<float>();
  const double eps = ctx.attrs.f("epsilon", 1e-5);
  const ChannelLayout l(x.dims);
  const double m = double(l.n * l.inner);
  float *dx = ctx.outputs[0].as<float>(), *dscale = ctx.outputs[1].as<float>(),
        *dbias = ctx.outputs[2].as<float>();
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < l.c; ++c) {
    auto for_each = [&](auto&& f) {
      for (int64_t b = 0; b < l.n; ++b) {
        const int64_t base = (b * l.c + c) * l.inner;
        for (int64_t i = 0; i < l.inner; ++i) f(base + i);
      }
    };
    double sum = 0, sq = 0;
    for_each([&](int64_t i) { sum += x.as<float>()[i]; });
    const double mean = sum / m;
    for_each([&](int64_t i) {
      const double d = x.as<float>()[i] - mean;
      sq += d * d;
    });
    const double invstd = 1.0 / std::sqrt(sq / m + eps);
    double sdy = 0, sdy_xhat = 0;
    for_each([&](int64_t i) {
      sdy += dy.as<float>()[i];
      sdy_xhat += dy.as<float>()[i] * (x.as<float>()[i] - mean) * invstd;
    });
    dbias[c] = float(sdy);
    dscale[c] = float(sdy_xhat);
    const double k = scale[c] * invstd / m;
    for_each([&](int64_t i) {
      const double xhat = (x.as<float>()[i] - mean) * invstd;
      dx[i] = float(k * (m * dy.as<float>()[i] - sdy - xhat * sdy_xhat));
    });
  }
}

void kernel_SgdUpdate(KernelContext& ctx) {
  require_f32(ctx);
  const float *p = ctx.inputs[0].as<float>(), *g = ctx.inputs[1].as<float>(),
              *vel = ctx.inputs[2].as<float>();
  const float lr = *ctx.inputs[3].as<float>();
  const float momentum = float(ctx.attrs.f("momentum", 0)), dampening = float(ctx.attrs.f("dampening", 0));
  const float wd = float(ctx.attrs.f("weight_decay", 0));
  const bool nesterov = ctx.attrs.i("nesterov", 0) != 0;
  float *p_out = ctx.outputs[0].as<float>(), *vel_out = ctx.outputs[1].as<float>();
  const int64_t n = ctx.inputs[0].numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    float d = g[i] + wd * p[i];
    float v = vel[i];
    if (momentum != 0.f) {
      v = momentum * v + (1.f - dampening) * d;
      d = nesterov ? d + momentum * v : v;
    }
    vel_out[i] = v;
    p_out[i] = p[i] - lr * d;
  }
}

void kernel_AdamUpdate(KernelContext& ctx) {
  require_f32(ctx);
  const float *p = ctx.inputs[0].as<float>(), *g = ctx.inputs[1].as<float>();
  const float *m = ctx.inputs[2].as<float>(), *v = ctx.inputs[3].as<float>();
  const float lr = *ctx.inputs[4].as<float>(), step = *ctx.inputs[5].as<float>();
  const double b1 = ctx.attrs.f("beta1", 0.9), b2 = ctx.attrs.f("beta2", 0.999),
               eps = ctx.attrs.f("eps", 1e-8);
  const float wd = float(ctx.attrs.f("weight_decay", 0));
  const bool decoupled = ctx.attrs.i("decoupled", 0) != 0;
  if (step < 1.f) ctx.fail("step must count from 1, got {}", step);
  const float step_size = float(lr / (1.0 - std::pow(b1, step)));
  const float bc2_sqrt = float(std::sqrt(1.0 - std::pow(b2, step)));
  const float fb1 = float(b1), fb2 = float(b2), feps = float(eps);
  float *p_out = ctx.outputs[0].as<float>(), *m_out = ctx.outputs[1].as<float>(),
        *v_out = ctx.outputs[2].as<float>();
  const int64_t n = ctx.inputs[0].numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    float pi = p[i];
    float gi = g[i];
    if (decoupled)
      pi *= 1.f - lr * wd;
    else
      gi += wd * pi;
    const float mi = fb1 * m[i] + (1.f - fb1) * gi;
    const float vi = fb2 * v[i] + (1.f - fb2) * gi * gi;
    m_out[i] = mi;
    v_out[i] = vi;
    p_out[i] = pi - step_size * mi / (std::sqrt(vi) / bc2_sqrt + feps);
  }
}

void kernel_RmspropUpdate(KernelContext& ctx) {
  require_f32(ctx);
  const float *p = ctx.inputs[0].as<float>(), *g = ctx.inputs[1].as<float>(),
              *square_avg = ctx.inputs[2].as<float>();
  const float lr = *ctx.inputs[3].as<float>();
  auto optional_input = [&](size_t i) {
    return i < ctx.inputs.size() && ctx.inputs[i].data ? ctx.inputs[i].as<float>() : nullptr;
  };
  const float *grad_avg = optional_input(4), *buf = optional_input(5);
  const float alpha = float(ctx.attrs.f("alpha", 0.99)), eps = float(ctx.attrs.f("eps", 1e-8));
  const float wd = float(ctx.attrs.f("weight_decay", 0)), momentum = float(ctx.attrs.f("momentum", 0));
  const bool centered = ctx.attrs.i("centered", 0) != 0;
  if (centered != (grad_avg != nullptr) || (momentum != 0.f) != (buf != nullptr))
    ctx.fail("the operands do not match centered={} momentum={}", int(centered), momentum);
  float *p_out = ctx.outputs[0].as<float>(), *square_avg_out = ctx.outputs[1].as<float>();
  float* grad_avg_out = centered ? ctx.outputs[2].as<float>() : nullptr;
  float* buf_out = buf ? ctx.outputs[3].as<float>() : nullptr;
  const float weight = 1.f - alpha;
  const int64_t n = ctx.inputs[0].numel();
  // torch.optim.RMSprop (single-tensor): square_avg.mul_(alpha).addcmul_(g, g, 1 - alpha);
  // grad_avg.lerp_(g, 1 - alpha); avg = sqrt(square_avg - grad_avg²) + eps (centered) or
  // sqrt(square_avg) + eps; buf = momentum * buf + g / avg, p -= lr * buf; or p -= lr * g / avg.
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    const float gi = wd != 0.f ? g[i] + wd * p[i] : g[i];
    const float sq = alpha * square_avg[i] + weight * gi * gi;
    square_avg_out[i] = sq;
    float avg;
    if (centered) {
      // torch.lerp with weight < 0.5: start + weight * (end - start).
      const float ga = weight < 0.5f ? grad_avg[i] + weight * (gi - grad_avg[i])
                                     : gi - (gi - grad_avg[i]) * (1.f - weight);
      grad_avg_out[i] = ga;
      avg = std::sqrt(sq - ga * ga) + eps;
    } else {
      avg = std::sqrt(sq) + eps;
    }
    if (buf) {
      const float b = momentum * buf[i] + gi / avg;
      buf_out[i] = b;
      p_out[i] = p[i] - lr * b;
    } else {
      p_out[i] = p[i] - lr * (gi / avg);
    }
  }
}

}  // namespace dlc::cpu
