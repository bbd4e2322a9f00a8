// Multi-tensor SGD, Adam/AdamW and RMSprop update kernels (optimizer_emitter.h).
#include "codegen/cuda/optimizer_emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/multi_tensor.h"
#include "dlc/error.h"
#include "dlc/hash.h"

namespace dlc::codegen::cuda {

namespace {

constexpr const char* kSgd = R"(
// torch.optim.SGD: d = g + weight_decay * p; with momentum v = momentum * v + (1 - dampening) * d
// and d = nesterov ? d + momentum * v : v; then p -= lr * d.
constexpr float kMomentum = ${MOMENTUM};
constexpr float kDampening = ${DAMPENING};
constexpr float kWeightDecay = ${WEIGHT_DECAY};
constexpr bool kNesterov = ${NESTEROV};
constexpr bool kUsesState0 = kMomentum != 0.0f;  // velocity
constexpr bool kUsesState1 = false;

struct DlcScalars {
  float lr;
};
__device__ __forceinline__ DlcScalars dlc_scalars(const float* lr, const float*) { return {*lr}; }

__device__ __forceinline__ void dlc_update(const DlcScalars& s, float& p, float g, float& velocity, float&) {
  float d = g + kWeightDecay * p;
  if (kUsesState0) {
    velocity = kMomentum * velocity + (1.0f - kDampening) * d;
    d = kNesterov ? d + kMomentum * velocity : velocity;
  }
  p = p - s.lr * d;
}
)";

constexpr const char* kAdam = R"(
// torch.optim.Adam / AdamW: weight decay added to g (Adam) or p *= 1 - lr * weight_decay (AdamW);
// m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g^2;
// p -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps).
constexpr float kBeta1 = ${BETA1};
constexpr float kBeta2 = ${BETA2};
constexpr float kEps = ${EPS};
constexpr float kWeightDecay = ${WEIGHT_DECAY};
constexpr bool kDecoupled = ${DECOUPLED};
constexpr bool kUsesState0 = true;  // m
constexpr bool kUsesState1 = true;  // v

struct DlcScalars {
  float lr, step_size, bias_correction2_sqrt;
};
__device__ __forceinline__ DlcScalars dlc_scalars(const float* lr, const float* step) {
  const double l = *lr, t = *step;
  return {float(l), float(l / (1.0 - pow(${BETA1_D}, t))), float(sqrt(1.0 - pow(${BETA2_D}, t)))};
}

__device__ __forceinline__ void dlc_update(const DlcScalars& s, float& p, float g, float& m, float& v) {
  if (kDecoupled)
    p *= 1.0f - s.lr * kWeightDecay;
  else
    g += kWeightDecay * p;
  m = kBeta1 * m + (1.0f - kBeta1) * g;
  v = kBeta2 * v + (1.0f - kBeta2) * g * g;
  p = p - s.step_size * m / (sqrtf(v) / s.bias_correction2_sqrt + kEps);
}
)";

constexpr const char* kRmsprop = R"(
// torch.optim.RMSprop: g += weight_decay * p; square_avg = alpha * square_avg + (1 - alpha) * g^2;
// centered: grad_avg = lerp(grad_avg, g, 1 - alpha), avg = sqrt(square_avg - grad_avg^2) + eps,
// else avg = sqrt(square_avg) + eps; with momentum buf = momentum * buf + g / avg, p -= lr * buf,
// else p -= lr * g / avg.
constexpr float kAlpha = ${ALPHA};
constexpr float kEps = ${EPS};
constexpr float kWeightDecay = ${WEIGHT_DECAY};
constexpr float kMomentum = ${MOMENTUM};
constexpr bool kCentered = ${CENTERED};
constexpr bool kUsesState0 = true;                               // square_avg
constexpr bool kUsesState1 = kCentered || kMomentum != 0.0f;  // grad_avg or momentum_buffer

struct DlcScalars {
  float lr;
};
__device__ __forceinline__ DlcScalars dlc_scalars(const float* lr, const float*) { return {*lr}; }

__device__ __forceinline__ void dlc_update(const DlcScalars& s, float& p, float g, float& square_avg,
                                           float& extra) {
  if (kWeightDecay != 0.0f) g += kWeightDecay * p;
  constexpr float kWeight = 1.0f - kAlpha;
  square_avg = kAlpha * square_avg + kWeight * g * g;
  float avg;
  if (kCentered) {  // torch.lerp: start + weight * (end - start) for weight < 0.5
    extra = kWeight < 0.5f ? extra + kWeight * (g - extra) : g - (g - extra) * (1.0f - kWeight);
    avg = sqrtf(square_avg - extra * extra) + kEps;
  } else {
    avg = sqrtf(square_avg) + kEps;
  }
  if (kUsesState1 && !kCentered) {
    extra = kMomentum * extra + g / avg;
    p = p - s.lr * extra;
  } else {
    p = p - s.lr * (g / avg);
  }
}
)";

constexpr const char* kMultiTensor = R"(
// The table of tensors (codegen/cuda/multi_tensor.h: MultiTensorEntry).
struct DlcTensorEntry {
  void* ptr[4];  // param, grad, state0, state1
  long long n;
  long long first_chunk;
};
constexpr long long kChunk = ${CHUNK};

// The entry holding `chunk`: the last one whose first_chunk <= chunk.
__device__ __forceinline__ int dlc_find_tensor(const DlcTensorEntry* __restrict__ table, int count, long long chunk) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table[mid].first_chunk <= chunk)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

using T = ${T};
using G = ${G};

extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const DlcTensorEntry* __restrict__ table, int num_tensors, long long num_chunks,
    const float* __restrict__ lr, const float* __restrict__ step, const bool* __restrict__ apply) {
  if (apply && !*apply) return;  // a step that does not apply: the states stay as they are
  const DlcScalars s = dlc_scalars(lr, step);
  for (long long chunk = blockIdx.x; chunk < num_chunks; chunk += gridDim.x) {
    const DlcTensorEntry t = table[dlc_find_tensor(table, num_tensors, chunk)];
    T* p = static_cast<T*>(t.ptr[0]);
    const G* g = static_cast<const G*>(t.ptr[1]);
    float* s0 = static_cast<float*>(t.ptr[2]);
    float* s1 = static_cast<float*>(t.ptr[3]);
    const long long begin = (chunk - t.first_chunk) * kChunk;
    const long long end = begin + kChunk < t.n ? begin + kChunk : t.n;
    long long first = begin;  // where the one-element loop starts
    if (dlc_aligned4(p) && dlc_aligned4(g) && (!kUsesState0 || dlc_aligned4(s0)) &&
        (!kUsesState1 || dlc_aligned4(s1))) {
      const long long vec_end = begin + (end - begin) / 4 * 4;
      for (long long i = begin + threadIdx.x * 4; i < vec_end; i += 256 * 4) {
        float pv[4], gv[4], av[4] = {0.0f, 0.0f, 0.0f, 0.0f}, bv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        dlc_load4(p + i, pv);
        dlc_load4(g + i, gv);
        if (kUsesState0) dlc_load4(s0 + i, av);
        if (kUsesState1) dlc_load4(s1 + i, bv);
#pragma unroll
        for (int k = 0; k < 4; ++k) dlc_update(s, pv[k], gv[k], av[k], bv[k]);
        dlc_store4(p + i, pv);
        if (kUsesState0) dlc_store4(s0 + i, av);
        if (kUsesState1) dlc_store4(s1 + i, bv);
      }
      first = vec_end;
    }
    for (long long i = first + threadIdx.x; i < end; i += 256) {
      float pi = dlc_to_float(p[i]), a = kUsesState0 ? s0[i] : 0.0f, b = kUsesState1 ? s1[i] : 0.0f;
      dlc_update(s, pi, dlc_to_float(g[i]), a, b);
      p[i] = dlc_from_float<T>(pi);
      if (kUsesState0) s0[i] = a;
      if (kUsesState1) s1[i] = b;
    }
  }
}
)";

KernelSource assemble(const std::string& kind, DType dtype, DType grad_dtype, const std::string& comment,
                      const std::string& update) {
  require_storage_float(dtype, "CUDA optimizer update");
  if (grad_dtype != dtype && !(dtype == DType::F32 && is_half(grad_dtype)))
    throw Error(
        fmt::format("CUDA optimizer update: {} gradients of {} parameters (the parameter's type, or "
                    "16-bit for f32)",
                    dtype_name(grad_dtype), dtype_name(dtype)));
  // The name carries a hash of the hyperparameters: one kernel per distinct set.
  const std::string detail = grad_dtype == dtype ? "" : std::string(dtype_name(grad_dtype)) + "_grad_";
  const std::string name = kernel_name(kind, dtype, detail + hex64(fnv1a64(update)).substr(0, 8));
  KernelSource ks = KernelSource::named(kind, name);
  ks.source = fmt::format("// dlc {} kernel {}: {} ({} parameters, {} gradients, f32 state).\n", kind, name,
                          comment, dtype_name(dtype), dtype_name(grad_dtype));
  ks.source += device_prelude({{dtype, grad_dtype}, true, false});
  ks.source += update;
  ks.source += fill(kMultiTensor, {{"CHUNK", fmt::format("{}", kMultiTensorChunk)},
                                   {"T", std::string(cuda_type(dtype))},
                                   {"G", std::string(cuda_type(grad_dtype))},
                                   {"NAME", name}});
  // Grid 0: multi_tensor_grid(num_chunks), at launch.
  ks.entries.push_back(
      {name, launch_1d(0, 256), {"table", "num_tensors", "num_chunks", "lr", "step", "apply"}});
  return ks;
}

}  // namespace

int64_t multi_tensor_grid(int64_t num_chunks) { return std::clamp<int64_t>(num_chunks, 1, int64_t(1) << 20); }

KernelSource emit_sgd_update(const SgdSpec& spec) {
  const std::string update = fill(kSgd, {{"MOMENTUM", float_literal(spec.momentum)},
                                         {"DAMPENING", float_literal(spec.dampening)},
                                         {"WEIGHT_DECAY", float_literal(spec.weight_decay)},
                                         {"NESTEROV", spec.nesterov ? "true" : "false"}});
  return assemble("sgd_update", spec.dtype, spec.grad_dtype,
                  fmt::format("SGD momentum {} dampening {} weight decay {}{}", double_literal(spec.momentum),
                              double_literal(spec.dampening), double_literal(spec.weight_decay),
                              spec.nesterov ? " nesterov" : ""),
                  update);
}

KernelSource emit_adam_update(const AdamSpec& spec) {
  const std::string update = fill(kAdam, {{"BETA1", float_literal(spec.beta1)},
                                          {"BETA2", float_literal(spec.beta2)},
                                          {"EPS", float_literal(spec.eps)},
                                          {"WEIGHT_DECAY", float_literal(spec.weight_decay)},
                                          {"DECOUPLED", spec.decoupled ? "true" : "false"},
                                          {"BETA1_D", double_literal(spec.beta1)},
                                          {"BETA2_D", double_literal(spec.beta2)}});
  return assemble(spec.decoupled ? "adamw_update" : "adam_update", spec.dtype, spec.grad_dtype,
                  fmt::format("{} betas ({}, {}) eps {} weight decay {}", spec.decoupled ? "AdamW" : "Adam",
                              double_literal(spec.beta1), double_literal(spec.beta2),
                              double_literal(spec.eps), double_literal(spec.weight_decay)),
                  update);
}

KernelSource emit_rmsprop_update(const RmspropSpec& spec) {
  if (spec.centered && spec.momentum != 0)
    throw Error("CUDA RMSprop: centered with momentum needs three state tensors; the table holds two");
  const std::string update = fill(kRmsprop, {{"ALPHA", float_literal(spec.alpha)},
                                             {"EPS", float_literal(spec.eps)},
                                             {"WEIGHT_DECAY", float_literal(spec.weight_decay)},
                                             {"MOMENTUM", float_literal(spec.momentum)},
                                             {"CENTERED", spec.centered ? "true" : "false"}});
  return assemble(
      "rmsprop_update", spec.dtype, spec.grad_dtype,
      fmt::format("RMSprop alpha {} eps {} weight decay {} momentum {}{}", double_literal(spec.alpha),
                  double_literal(spec.eps), double_literal(spec.weight_decay), double_literal(spec.momentum),
                  spec.centered ? " centered" : ""),
      update);
}

}  // namespace dlc::codegen::cuda
