// CPU kernels of the optimizer updates, f32 with torch.optim's formulas: SgdUpdate (momentum,
// dampening, Nesterov), AdamUpdate (Adam, AdamW), RmspropUpdate (centered, momentum), and
// MultiTensorUpdate, the fusion pass's merge of many updates of one kind
// (dlc/multi_tensor_update.h). Each optimizer is one element update (hyperparameters and scalars
// read once, then any range of one tensor's elements); a single update and a merged one both run
// it through update_tensors, which splits the elements of all its tensors over the threads in one
// parallel region. The same code computes every element either way, so merged and unmerged
// training give the same bits.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "dlc/in_place_operands.h"
#include "dlc/multi_tensor_update.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/simd_math.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

// One tensor's operands and results, indexed as in its single-tensor op (null: absent, or a
// scalar operand), and its element count.
struct UpdateTensors {
  const float* in[7] = {};
  float* out[4] = {};
  int64_t n = 0;
};

// SgdUpdate(param, grad, velocity, lr) -> param', velocity'.
class SgdElementUpdate {
 public:
  SgdElementUpdate(const KernelContext& ctx, float lr, float /*step*/)
      : lr_(lr),
        momentum_(float(ctx.attrs.f("momentum", 0))),
        dampening_(float(ctx.attrs.f("dampening", 0))),
        wd_(float(ctx.attrs.f("weight_decay", 0))),
        nesterov_(ctx.attrs.i("nesterov", 0) != 0) {}

  void check(const KernelContext&, const UpdateTensors&) const {}

  void operator()(const UpdateTensors& t, int64_t begin, int64_t end) const {
    const float *p = t.in[0], *g = t.in[1], *vel = t.in[2];
    float *p_out = t.out[0], *vel_out = t.out[1];
    const float lr = lr_, momentum = momentum_, dampening = dampening_, wd = wd_;
    const bool nesterov = nesterov_;
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
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

 private:
  float lr_, momentum_, dampening_, wd_;
  bool nesterov_;
};

// AdamUpdate(param, grad, m, v, lr, step) -> param', m', v' (decoupled=1: AdamW).
class AdamElementUpdate {
 public:
  AdamElementUpdate(const KernelContext& ctx, float lr, float step)
      : lr_(lr), wd_(float(ctx.attrs.f("weight_decay", 0))), decoupled_(ctx.attrs.i("decoupled", 0) != 0) {
    const double b1 = ctx.attrs.f("beta1", 0.9), b2 = ctx.attrs.f("beta2", 0.999),
                 eps = ctx.attrs.f("eps", 1e-8);
    if (step < 1.f) ctx.fail("step must count from 1, got {}", step);
    step_size_ = float(lr / (1.0 - std::pow(b1, step)));
    bc2_sqrt_ = float(std::sqrt(1.0 - std::pow(b2, step)));
    b1_ = float(b1);
    b2_ = float(b2);
    eps_ = float(eps);
  }

  void check(const KernelContext&, const UpdateTensors&) const {}

  void operator()(const UpdateTensors& t, int64_t begin, int64_t end) const {
    const float *p = t.in[0], *g = t.in[1], *m = t.in[2], *v = t.in[3];
    float *p_out = t.out[0], *m_out = t.out[1], *v_out = t.out[2];
    const float lr = lr_, wd = wd_, step_size = step_size_, bc2_sqrt = bc2_sqrt_, fb1 = b1_, fb2 = b2_,
                feps = eps_;
    const bool decoupled = decoupled_;
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
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

 private:
  float lr_, wd_, step_size_ = 0, bc2_sqrt_ = 0, b1_ = 0, b2_ = 0, eps_ = 0;
  bool decoupled_;
};

// RmspropUpdate(param, grad, square_avg, lr, grad_avg?, momentum_buffer?) -> param', square_avg',
// grad_avg'?, momentum_buffer'?, as torch.optim.RMSprop (single-tensor):
// square_avg.mul_(alpha).addcmul_(g, g, 1 - alpha); grad_avg.lerp_(g, 1 - alpha);
// avg = sqrt(square_avg - grad_avg²) + eps (centered) or sqrt(square_avg) + eps;
// buf = momentum * buf + g / avg, p -= lr * buf; or p -= lr * g / avg.
class RmspropElementUpdate {
 public:
  RmspropElementUpdate(const KernelContext& ctx, float lr, float /*step*/)
      : lr_(lr),
        alpha_(float(ctx.attrs.f("alpha", 0.99))),
        eps_(float(ctx.attrs.f("eps", 1e-8))),
        wd_(float(ctx.attrs.f("weight_decay", 0))),
        momentum_(float(ctx.attrs.f("momentum", 0))),
        centered_(ctx.attrs.i("centered", 0) != 0) {}

  void check(const KernelContext& ctx, const UpdateTensors& t) const {
    if (centered_ != (t.in[4] != nullptr) || (momentum_ != 0.f) != (t.in[5] != nullptr))
      ctx.fail("the operands do not match centered={} momentum={}", int(centered_), momentum_);
  }

  void operator()(const UpdateTensors& t, int64_t begin, int64_t end) const {
    const float *p = t.in[0], *g = t.in[1], *square_avg = t.in[2], *grad_avg = t.in[4], *buf = t.in[5];
    float *p_out = t.out[0], *square_avg_out = t.out[1], *grad_avg_out = t.out[2], *buf_out = t.out[3];
    const float lr = lr_, alpha = alpha_, eps = eps_, wd = wd_, momentum = momentum_;
    const bool centered = centered_;
    const float weight = 1.f - alpha;
    for (int64_t i = begin; i < end; ++i) {
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

 private:
  float lr_, alpha_, eps_, wd_, momentum_;
  bool centered_;
};

// The element loops of `update` over `tensors` of `total` elements: one parallel region splits
// the tensors' elements, end to end, into one contiguous range per thread. Throws nothing (a
// DLC_SIMD_CLONES function must not).
template <typename Update>
DLC_SIMD_CLONES void apply_update(const Update& update, const std::vector<UpdateTensors>& tensors,
                                  int64_t total) {
  parallel_chunks(total, 65536, [&](int64_t begin, int64_t end) {
    int64_t first = 0;  // of the tensor's elements in [0, total)
    for (const UpdateTensors& t : tensors) {
      const int64_t lo = std::max(begin, first), hi = std::min(end, first + t.n);
      if (lo < hi) update(t, lo - first, hi - first);
      first += t.n;
    }
  });
}

// Runs `Update` over every element of every tensor, after its checks.
template <typename Update>
void update_tensors(const KernelContext& ctx, float lr, float step,
                    const std::vector<UpdateTensors>& tensors) {
  const Update update(ctx, lr, step);
  int64_t total = 0;
  for (const UpdateTensors& t : tensors) {
    update.check(ctx, t);
    total += t.n;
  }
  apply_update(update, tensors, total);
}

// Whether the update applies: no apply operand (at input `index`), or a true one.
bool applies(const KernelContext& ctx, size_t index) {
  if (index >= ctx.inputs.size() || !ctx.inputs[index].data) return true;
  const TensorView& apply = ctx.inputs[index];
  if (apply.dtype != DType::Bool || apply.numel() != 1) ctx.fail("apply must be a bool scalar");
  return *apply.as<uint8_t>() != 0;
}

// A step that does not apply: each result is the operand it updates (dlc/in_place_operands.h),
// already so where they share a buffer.
void keep_states(const KernelContext& ctx, const MultiTensorLayout& layout,
                 const std::vector<UpdateTensors>& list) {
  for (const UpdateTensors& t : list)
    for (int j = 0; j < layout.outputs; ++j) {
      const float* in = t.in[in_place_operand(layout.update, ctx.attrs, j)];
      if (t.out[j] && in && t.out[j] != in) std::copy(in, in + t.n, t.out[j]);
    }
}

// The updates of a step with `tensors` tensors whose operand i and result j of tensor k are the
// step's operand input_of(k, i) and result output_of(k, j) (the layout's indices).
template <typename InputOf, typename OutputOf>
void run_updates(const KernelContext& ctx, const MultiTensorLayout& layout, int tensors, InputOf input_of,
                 OutputOf output_of) {
  const auto operand = [&](int k, int i) -> const TensorView* {
    const size_t index = size_t(input_of(k, i));
    if (index >= ctx.inputs.size() || !ctx.inputs[index].data) return nullptr;
    const TensorView& v = ctx.inputs[index];
    if (v.dtype != DType::F32) ctx.fail("dtype {} is not supported", dtype_name(v.dtype));
    return &v;
  };
  float scalars[2] = {0.f, 0.f};  // lr, step
  for (int i = 0, s = 0; i < layout.inputs; ++i)
    if (layout.is_scalar(i) && i != layout.apply_input()) {
      const TensorView* v = operand(0, i);
      if (!v || v->numel() != 1) ctx.fail("operand {} must be an f32 scalar", input_of(0, i));
      scalars[s++] = *v->as<float>();
    }
  std::vector<UpdateTensors> list(static_cast<size_t>(tensors));
  for (int k = 0; k < tensors; ++k) {
    UpdateTensors& t = list[size_t(k)];
    for (int i = 0; i < layout.inputs; ++i)
      if (const TensorView* v = layout.is_scalar(i) ? nullptr : operand(k, i)) t.in[i] = v->as<float>();
    for (int j = 0; j < layout.outputs; ++j) {
      const size_t index = size_t(output_of(k, j));
      if (index < ctx.outputs.size()) t.out[j] = ctx.outputs[index].as<float>();
    }
    if (!t.in[0] || !t.in[1]) ctx.fail("tensor {}: param and grad are required", k);
    t.n = num_elements(ctx.inputs[size_t(input_of(k, 0))].dims);
  }
  if (!applies(ctx, size_t(input_of(0, layout.apply_input())))) {
    keep_states(ctx, layout, list);
    return;
  }
  if (layout.update == "SgdUpdate")
    update_tensors<SgdElementUpdate>(ctx, scalars[0], scalars[1], list);
  else if (layout.update == "AdamUpdate")
    update_tensors<AdamElementUpdate>(ctx, scalars[0], scalars[1], list);
  else
    update_tensors<RmspropElementUpdate>(ctx, scalars[0], scalars[1], list);
}

void run_single(const KernelContext& ctx, std::string_view op) {
  run_updates(
      ctx, *find_multi_tensor_layout(op), 1, [](int, int i) { return i; }, [](int, int j) { return j; });
}

// A 16-bit gradient of an f32 parameter (passes/optimizer_fusion.h folds its Cast) is widened
// first: the update of the cast gradient, bit for bit. `self` is the op's kernel.
void run_single_update(const KernelContext& ctx, KernelFn self, std::string_view op) {
  if (!(is_half(ctx.inputs[1].dtype) && run_widened(ctx, self))) run_single(ctx, op);
}

}  // namespace

void kernel_SgdUpdate(const KernelContext& ctx) { run_single_update(ctx, kernel_SgdUpdate, "SgdUpdate"); }
void kernel_AdamUpdate(const KernelContext& ctx) { run_single_update(ctx, kernel_AdamUpdate, "AdamUpdate"); }
void kernel_RmspropUpdate(const KernelContext& ctx) {
  run_single_update(ctx, kernel_RmspropUpdate, "RmspropUpdate");
}

void kernel_MultiTensorUpdate(const KernelContext& ctx) {
  const std::string update = ctx.attrs.s("update", "");
  const MultiTensorLayout* layout = find_multi_tensor_layout(update);
  if (!layout) ctx.fail("update '{}' is not SgdUpdate, AdamUpdate or RmspropUpdate", update);
  const int tensors = layout->tensors(int(ctx.inputs.size()), int(ctx.outputs.size()));
  if (tensors < 1)
    ctx.fail("{} operands and {} results do not fit {}", ctx.inputs.size(), ctx.outputs.size(), update);
  run_updates(
      ctx, *layout, tensors, [&](int k, int i) { return layout->merged_input(k, i); },
      [&](int k, int j) { return layout->merged_output(k, j); });
}

}  // namespace dlc::cpu
