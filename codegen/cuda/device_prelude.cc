// The device-side helpers emitted at the top of kernel sources (device_prelude.h).
#include "codegen/cuda/device_prelude.h"

#include <algorithm>

#include "codegen/cuda/emit_util.h"

namespace dlc::codegen::cuda {

namespace {

bool has(const std::vector<DType>& types, DType t) {
  return std::find(types.begin(), types.end(), t) != types.end();
}

constexpr const char* kF32 =
    R"(__device__ __forceinline__ float dlc_inf() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float dlc_nan() { return __int_as_float(0x7fffffff); }
// max that propagates NaN as torch's max reductions do (fmaxf would drop it)
__device__ __forceinline__ float dlc_nan_max(float a, float b) { return b != b || b > a ? b : a; }
__device__ __forceinline__ float dlc_to_float(float v) { return v; }
template <typename T>
__device__ __forceinline__ T dlc_from_float(float v);
template <>
__device__ __forceinline__ float dlc_from_float<float>(float v) { return v; }
)";

constexpr const char* kF16 =
    R"(__device__ __forceinline__ float dlc_to_float(__half v) { return __half2float(v); }
template <>
__device__ __forceinline__ __half dlc_from_float<__half>(float v) { return __float2half_rn(v); }
)";

constexpr const char* kBF16 =
    R"(__device__ __forceinline__ float dlc_to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <>
__device__ __forceinline__ __nv_bfloat16 dlc_from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
)";

constexpr const char* kBool =
    R"(__device__ __forceinline__ float dlc_to_float(unsigned char v) { return v ? 1.0f : 0.0f; }
template <>
__device__ __forceinline__ unsigned char dlc_from_float<unsigned char>(float v) { return v != 0.0f ? 1 : 0; }
)";

constexpr const char* kAligned = R"(
// Vector I/O: 4 consecutive elements in one load or store (float4, 8 bytes of 16-bit floats,
// uchar4), used where every pointer is aligned to 4 elements.
template <typename T>
__device__ __forceinline__ bool dlc_aligned4(const T* p) {
  return (reinterpret_cast<unsigned long long>(p) % (4 * sizeof(T))) == 0;
}
)";

constexpr const char* kVecF32 = R"(__device__ __forceinline__ void dlc_load4(const float* p, float (&v)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
}
__device__ __forceinline__ void dlc_store4(float* p, const float (&v)[4]) {
  *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
)";

// 16-bit types: one 8-byte load, split into two pairs. ${T} is the element, ${T2} its pair type.
constexpr const char* kVecHalf = R"(__device__ __forceinline__ void dlc_load4(const ${T}* p, float (&v)[4]) {
  const uint2 q = *reinterpret_cast<const uint2*>(p);
  const float2 a = ${TO_FLOAT2}(*reinterpret_cast<const ${T2}*>(&q.x));
  const float2 b = ${TO_FLOAT2}(*reinterpret_cast<const ${T2}*>(&q.y));
  v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
}
__device__ __forceinline__ void dlc_store4(${T}* p, const float (&v)[4]) {
  const ${T2} a = ${FROM_FLOAT2}(v[0], v[1]);
  const ${T2} b = ${FROM_FLOAT2}(v[2], v[3]);
  uint2 q;
  q.x = *reinterpret_cast<const unsigned int*>(&a);
  q.y = *reinterpret_cast<const unsigned int*>(&b);
  *reinterpret_cast<uint2*>(p) = q;
}
)";

constexpr const char* kVecBool =
    R"(__device__ __forceinline__ void dlc_load4(const unsigned char* p, float (&v)[4]) {
  const uchar4 q = *reinterpret_cast<const uchar4*>(p);
  v[0] = q.x ? 1.0f : 0.0f, v[1] = q.y ? 1.0f : 0.0f, v[2] = q.z ? 1.0f : 0.0f, v[3] = q.w ? 1.0f : 0.0f;
}
__device__ __forceinline__ void dlc_store4(unsigned char* p, const float (&v)[4]) {
  *reinterpret_cast<uchar4*>(p) = make_uchar4(v[0] != 0.0f, v[1] != 0.0f, v[2] != 0.0f, v[3] != 0.0f);
}
)";

// Reductions over a warp or a 1-D block (warp_and_block_reduction).
constexpr const char* kReduction = R"(__device__ __forceinline__ float ${WARP}(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float a = v, b = __shfl_xor_sync(0xffffffffu, v, offset);
    v = ${COMBINE};
  }
  return v;
}
__device__ __forceinline__ float ${BLOCK}(float v, float* scratch) {
  v = ${WARP}(v);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  v = (threadIdx.x & 31) < (blockDim.x >> 5) ? scratch[threadIdx.x & 31] : ${IDENTITY};
  v = ${WARP}(v);
  __syncthreads();  // scratch may be reused at once
  return v;
}
)";

}  // namespace

std::string device_prelude(const PreludeOptions& options) {
  const auto& types = options.types;
  const bool f16 = has(types, DType::F16), bf16 = has(types, DType::BF16);
  const bool boolean = has(types, DType::Bool) || has(types, DType::U8);
  std::string s = "// ---- dlc device prelude: storage types convert to and from float, the compute type.\n";
  if (f16) s += "#include <cuda_fp16.h>\n";
  if (bf16) s += "#include <cuda_bf16.h>\n";
  s += "\n";
  s += kF32;
  if (f16) s += kF16;
  if (bf16) s += kBF16;
  if (boolean) s += kBool;
  if (options.vector_io) {
    s += kAligned;
    s += kVecF32;
    if (f16)
      s += fill(kVecHalf, {{"T", "__half"},
                           {"T2", "__half2"},
                           {"TO_FLOAT2", "__half22float2"},
                           {"FROM_FLOAT2", "__floats2half2_rn"}});
    if (bf16)
      s += fill(kVecHalf, {{"T", "__nv_bfloat16"},
                           {"T2", "__nv_bfloat162"},
                           {"TO_FLOAT2", "__bfloat1622float2"},
                           {"FROM_FLOAT2", "__floats2bfloat162_rn"}});
    if (boolean) s += kVecBool;
  }
  if (options.reductions) {
    s += "// Sums and maxima over a warp or a block; max propagates NaN (dlc_nan_max).\n";
    s += warp_and_block_reduction("dlc_warp_sum", "dlc_block_sum", "a + b", "0.0f");
    s += warp_and_block_reduction("dlc_warp_max", "dlc_block_max", "dlc_nan_max(a, b)", "-dlc_inf()");
  }
  s += "// ---- end of prelude\n";
  return s;
}

std::string warp_and_block_reduction(std::string_view warp, std::string_view block, std::string_view combine,
                                     std::string_view identity) {
  return fill(kReduction, {{"WARP", std::string(warp)},
                           {"BLOCK", std::string(block)},
                           {"COMBINE", std::string(combine)},
                           {"IDENTITY", std::string(identity)}});
}

}  // namespace dlc::codegen::cuda
