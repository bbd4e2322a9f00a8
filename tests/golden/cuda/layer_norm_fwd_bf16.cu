// dlc layer_norm_fwd kernel dlc_layer_norm_fwd_bf16_256x768: rows of [256, 768] (bf16), epsilon 1e-05.
// ---- dlc device prelude: storage types convert to and from float, the compute type.
#include <cuda_bf16.h>

__device__ __forceinline__ float dlc_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float dlc_nan() { return __int_as_float(0x7fffffff); }
// max that propagates NaN as torch's max reductions do (fmaxf would drop it)
__device__ __forceinline__ float dlc_nan_max(float a, float b) { return b != b || b > a ? b : a; }
__device__ __forceinline__ float dlc_to_float(float v) { return v; }
template <typename T>
__device__ __forceinline__ T dlc_from_float(float v);
template <>
__device__ __forceinline__ float dlc_from_float<float>(float v) { return v; }
__device__ __forceinline__ float dlc_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 dlc_from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
// Sums and maxima over a warp or a block; max propagates NaN (dlc_nan_max).
__device__ __forceinline__ float dlc_warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float a = v, b = __shfl_xor_sync(0xffffffffu, v, offset);
    v = a + b;
  }
  return v;
}
__device__ __forceinline__ float dlc_block_sum(float v, float* scratch) {
  v = dlc_warp_sum(v);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (blockDim.x >> 5) ? scratch[threadIdx.x & 31] : 0.0f;
  v = dlc_warp_sum(v);
  __syncthreads();  // scratch may be reused at once
  return v;
}
__device__ __forceinline__ float dlc_warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float a = v, b = __shfl_xor_sync(0xffffffffu, v, offset);
    v = dlc_nan_max(a, b);
  }
  return v;
}
__device__ __forceinline__ float dlc_block_max(float v, float* scratch) {
  v = dlc_warp_max(v);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (blockDim.x >> 5) ? scratch[threadIdx.x & 31] : -dlc_inf();
  v = dlc_warp_max(v);
  __syncthreads();  // scratch may be reused at once
  return v;
}
// ---- end of prelude

// Rows: 256 rows of 768 elements, 1 apart.
using Index = int;
constexpr Index kRows = 256;
constexpr Index kExtent = 768;
constexpr Index kInner = 1;
// The first element of row r (r / kInner * kExtent * kInner + r % kInner, r * kExtent when kInner is 1).
__device__ __forceinline__ Index dlc_row_base(Index r) { return r / kInner * (kExtent * kInner) + r % kInner; }
// One warp per row, 8 rows per block.
constexpr int kRowThreads = 32;
__device__ __forceinline__ Index dlc_row_first() { return Index(blockIdx.x) * 8 + Index(threadIdx.x >> 5); }
__device__ __forceinline__ Index dlc_row_step() { return Index(gridDim.x) * 8; }
__device__ __forceinline__ int dlc_row_lane() { return threadIdx.x & 31; }
__device__ __forceinline__ float dlc_row_sum(float v, float*) { return dlc_warp_sum(v); }
__device__ __forceinline__ float dlc_row_max(float v, float*) { return dlc_warp_max(v); }

using T = __nv_bfloat16;
using Y = __nv_bfloat16;  // y's and dy's type: T, or a half type where T is f32 (mixed precision)
constexpr float kEpsilon = 1e-05f;

__device__ __forceinline__ void dlc_row_statistics(const T* __restrict__ xr, float* scratch, float& mean,
                                                   float& inv_std) {
  float sum = 0.0f;
  for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) sum += dlc_to_float(xr[c]);
  mean = dlc_row_sum(sum, scratch) / float(kExtent);
  float sq = 0.0f;
  for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) {
    const float d = dlc_to_float(xr[c]) - mean;
    sq += d * d;
  }
  inv_std = 1.0f / sqrtf(dlc_row_sum(sq, scratch) / float(kExtent) + kEpsilon);
}

constexpr bool kHasBias = true;

extern "C" __global__ void __launch_bounds__(256) dlc_layer_norm_fwd_bf16_256x768(
    const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
    Y* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ inv_std_out) {
  __shared__ float scratch[32];
  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
    const T* xr = x + dlc_row_base(row);
    Y* yr = y + dlc_row_base(row);
    float mean, inv_std;
    dlc_row_statistics(xr, scratch, mean, inv_std);
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) {
      const Index p = c;
      const float b = kHasBias ? dlc_to_float(bias[p]) : 0.0f;
      yr[c] = dlc_from_float<Y>((dlc_to_float(xr[c]) - mean) * inv_std * dlc_to_float(scale[p]) + b);
    }
    if (dlc_row_lane() == 0) {
      if (mean_out) mean_out[row] = mean;
      if (inv_std_out) inv_std_out[row] = inv_std;
    }
  }
}
