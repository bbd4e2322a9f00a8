// CPU Attention and AttentionGrad (ir/ops/nn.def, grad.def): row by row, the S x Sk score
// matrix never stored, in either operand layout (AttentionShape::offset); f32 (f64) arithmetic, half operands
// widened (widen.h). Row i reads keys j < keys_of(i): all of them, or j <= i when causal.
//   forward:  s_j = scale q·k_j,  p_j = exp(s_j - max) / l,  o = Σ p_j v_j,  lse = max + log l
//   backward: p_j = exp(scale q·k_j - lse),  D = do·o,  ds_j = p_j (do·v_j - D),
//             dq = scale Σ ds_j k_j,  dk_j += scale ds_j q,  dv_j += p_j do
// The backward takes D from the forward's (rounded) result, as FlashAttention's does, so the CPU
// and CUDA kernels compute the same thing.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "dlc/attention.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/simd_math.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

// The problem of the operands at inputs first… (dlc/attention.h) and whether it is causal.
struct AttentionDims : AttentionShape {
  bool causal = false;
  int64_t keys_of(int64_t row) const { return AttentionShape::keys_of(row, causal); }
};

AttentionDims attention_dims(const KernelContext& ctx, int first) {
  AttentionDims d;
  static_cast<AttentionShape&>(d) = attention_shape(ctx.inputs[first].dims, ctx.inputs[first + 1].dims,
                                                    ctx.inputs[first + 2].dims, ctx.attrs);
  d.causal = ctx.attrs.i("causal", 0) != 0;
  return d;
}

template <typename T>
T dot(const T* a, const T* b, int64_t n) {
  T s = 0;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y += a * x
template <typename T>
void axpy(T a, const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

template <typename T>
void attention(const KernelContext& ctx) {
  const AttentionDims d = attention_dims(ctx, 0);
  const T *q = ctx.inputs[0].as<T>(), *k = ctx.inputs[1].as<T>(), *v = ctx.inputs[2].as<T>();
  T* o = ctx.outputs[0].as<T>();
  float* lse = ctx.has_output(1) ? ctx.outputs[1].as<float>() : nullptr;
  const T scale = T(ctx.attrs.f("scale", 1.0));
  parallel_chunks(d.groups * d.rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> p(size_t(d.keys));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t g = row / d.rows, i = row % d.rows, keys = d.keys_of(i);
      const T* qi = q + d.offset(g, i, d.rows, d.depth);
      T max = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < keys; ++j)
        max = std::max(max, p[j] = scale * dot(qi, k + d.offset(g, j, d.keys, d.depth), d.depth));
      T sum = 0;
      for (int64_t j = 0; j < keys; ++j) sum += p[j] = simd_exp(p[j] - max);
      T* oi = o + d.offset(g, i, d.rows, d.value_depth);
      std::fill(oi, oi + d.value_depth, T(0));
      for (int64_t j = 0; j < keys; ++j)
        axpy(p[j] / sum, v + d.offset(g, j, d.keys, d.value_depth), oi, d.value_depth);
      if (lse) lse[row] = float(max + std::log(sum));
    }
  });
}

template <typename T>
void attention_grad(const KernelContext& ctx) {
  const AttentionDims d = attention_dims(ctx, 1);
  const T *dout = ctx.inputs[0].as<T>(), *q = ctx.inputs[1].as<T>(), *k = ctx.inputs[2].as<T>(),
          *v = ctx.inputs[3].as<T>(), *o = ctx.inputs[4].as<T>();
  const float* lse = ctx.inputs[5].as<float>();
  T *dq = ctx.outputs[0].as<T>(), *dk = ctx.outputs[1].as<T>(), *dv = ctx.outputs[2].as<T>();
  const T scale = T(ctx.attrs.f("scale", 1.0));
  // One group per task: its key and value gradients sum over all of its rows.
  parallel_chunks(d.groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      for (int64_t j = 0; j < d.keys; ++j) {
        std::fill_n(dk + d.offset(g, j, d.keys, d.depth), d.depth, T(0));
        std::fill_n(dv + d.offset(g, j, d.keys, d.value_depth), d.value_depth, T(0));
      }
      for (int64_t i = 0; i < d.rows; ++i) {
        const int64_t qd = d.offset(g, i, d.rows, d.depth), od = d.offset(g, i, d.rows, d.value_depth);
        const T *qi = q + qd, *doi = dout + od;
        const T di = dot(doi, o + od, d.value_depth), l = T(lse[g * d.rows + i]);
        T* dqi = dq + qd;
        std::fill(dqi, dqi + d.depth, T(0));
        for (int64_t j = 0; j < d.keys_of(i); ++j) {
          const int64_t kd = d.offset(g, j, d.keys, d.depth), vd = d.offset(g, j, d.keys, d.value_depth);
          const T* kj = k + kd;
          const T p = simd_exp(scale * dot(qi, kj, d.depth) - l);
          const T ds = scale * p * (dot(doi, v + vd, d.value_depth) - di);
          axpy(p, doi, dv + vd, d.value_depth);
          axpy(ds, kj, dqi, d.depth);
          axpy(ds, qi, dk + kd, d.depth);
        }
      }
    }
  });
}

}  // namespace

void kernel_Attention(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_Attention)) return;
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) { attention<typename decltype(tag)::type>(ctx); });
}

void kernel_AttentionGrad(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_AttentionGrad)) return;
  dispatch_float(ctx.inputs[1].dtype, ctx,
                 [&](auto tag) { attention_grad<typename decltype(tag)::type>(ctx); });
}

}  // namespace dlc::cpu
