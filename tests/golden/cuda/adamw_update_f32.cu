// dlc adamw_update kernel dlc_adamw_update_f32_a3b8c723: AdamW betas (0.9, 0.999) eps 1e-08 weight decay 0.01 (f32 parameters, f32 gradients, f32 state).
// ---- dlc device prelude: storage types convert to and from float, the compute type.

__device__ __forceinline__ float dlc_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float dlc_nan() { return __int_as_float(0x7fffffff); }
// max that propagates NaN as torch's max reductions do (fmaxf would drop it)
__device__ __forceinline__ float dlc_nan_max(float a, float b) { return b != b || b > a ? b : a; }
__device__ __forceinline__ float dlc_to_float(float v) { return v; }
template <typename T>
__device__ __forceinline__ T dlc_from_float(float v);
template <>
__device__ __forceinline__ float dlc_from_float<float>(float v) { return v; }

// Vector I/O: 4 consecutive elements in one load or store (float4, 8 bytes of 16-bit floats,
// uchar4), used where every pointer is aligned to 4 elements.
template <typename T>
__device__ __forceinline__ bool dlc_aligned4(const T* p) {
  return (reinterpret_cast<unsigned long long>(p) % (4 * sizeof(T))) == 0;
}
__device__ __forceinline__ void dlc_load4(const float* p, float (&v)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}
__device__ __forceinline__ void dlc_store4(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
// ---- end of prelude

// torch.optim.Adam / AdamW: weight decay added to g (Adam) or p *= 1 - lr * weight_decay (AdamW);
// m = beta1 * m + (1 - beta1) * g; v = beta2 * v + (1 - beta2) * g^2;
// p -= lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps).
constexpr float kBeta1 = 0.9f;
constexpr float kBeta2 = 0.999f;
constexpr float kEps = 1e-08f;
constexpr float kWeightDecay = 0.01f;
constexpr bool kDecoupled = true;
constexpr bool kUsesState0 = true;  // m
constexpr bool kUsesState1 = true;  // v

struct DlcScalars {
  float lr, step_size, bias_correction2_sqrt;
};
__device__ __forceinline__ DlcScalars dlc_scalars(const float* lr, const float* step) {
  const double l = *lr, t = *step;
  return {float(l), float(l / (1.0 - pow(0.9, t))), float(sqrt(1.0 - pow(0.999, t)))};
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

// The table of tensors (codegen/cuda/multi_tensor.h: MultiTensorEntry).
struct DlcTensorEntry {
  void* ptr[4];  // param, grad, state0, state1
  long long n;
  long long first_chunk;
};
constexpr long long kChunk = 4096;

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

using T = float;
using G = float;

extern "C" __global__ void __launch_bounds__(256) dlc_adamw_update_f32_a3b8c723(
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
