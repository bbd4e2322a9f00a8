// Attention forward and backward kernels (attention_emitter.h).
#include "codegen/cuda/attention_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/attention.h"
#include "dlc/error.h"
#include "dlc/hash.h"

namespace dlc::codegen::cuda {

namespace {

constexpr int kTile = 64;  // rows or keys per tile
constexpr int kWarps = 4;  // 16 rows or keys each

// Constants, fragment types and the warp-level tile products every entry uses. A warp's f32
// scratch has rows of kSw floats, room for a score tile row or an accumulator row.
constexpr const char* kCommon = R"(#include <mma.h>
namespace wmma = nvcuda::wmma;
using T = ${T};
constexpr int kD = ${D}, kDv = ${DV}, kTile = ${TILE}, kWarps = ${WARPS};
constexpr long long kRows = ${ROWS}, kKeys = ${KEYS};
constexpr float kScale = ${SCALE};
constexpr bool kCausal = ${CAUSAL};  // row i reads keys j <= i only
constexpr bool kSeqMajor = ${SEQ_MAJOR};  // operands [batch, rows, kHeads, width], groups batch x kHeads
constexpr long long kHeads = ${HEADS};

// Row i + 1 of a group's operand `kWidth` wide starts dlc_row_stride<kWidth>() after row i; row 0
// of group g at dlc_group<kWidth>(g, count) for `count` rows (AttentionShape in dlc/attention.h).
template <int kWidth>
__device__ __forceinline__ constexpr long long dlc_row_stride() { return kSeqMajor ? kHeads * kWidth : kWidth; }
template <int kWidth>
__device__ __forceinline__ long long dlc_group(long long g, long long count) {
  return kSeqMajor ? (g / kHeads * count * kHeads + g % kHeads) * kWidth : g * count * kWidth;
}

// The keys row `row` reads: [0, dlc_keys_of(row)).
__device__ __forceinline__ long long dlc_keys_of(long long row) {
  return kCausal && row + 1 < kKeys ? row + 1 : kKeys;
}
constexpr int kMaxD = kD > kDv ? kD : kDv;
// Row strides in shared memory, padded off multiples of 128 bytes so that the rows of a tile
// start in different banks: a T tile of width w has rows of dlc_ld(w) elements, a warp's f32
// scratch rows of kSw floats (WMMA wants multiples of 8 T and 4 floats).
__host__ __device__ constexpr int dlc_ld(int width) { return width + 8; }
constexpr int kSw = (kTile > kMaxD ? kTile : kMaxD) + 4;
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
using FragACol = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::col_major>;
using FragBRow = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
using FragBCol = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// Rows [first, first + kTile) of a group's [count, kWidth] operand (rows dlc_row_stride apart)
// into shared memory (rows of dlc_ld(kWidth)), zeros past count: 16-byte loads where the source
// is 16-byte aligned.
template <int kWidth>
__device__ __forceinline__ void dlc_load_tile(T* dst, const T* __restrict__ src, long long first, long long count) {
  constexpr int kVec = 16 / sizeof(T), kChunks = kWidth / kVec;
  if ((reinterpret_cast<unsigned long long>(src) & 15) == 0) {
    for (int i = threadIdx.x; i < kTile * kChunks; i += blockDim.x) {
      const int r = i / kChunks, c = (i % kChunks) * kVec;
      uint4 chunk = make_uint4(0u, 0u, 0u, 0u);
      if (first + r < count)
        chunk = *reinterpret_cast<const uint4*>(src + (first + r) * dlc_row_stride<kWidth>() + c);
      *reinterpret_cast<uint4*>(dst + r * dlc_ld(kWidth) + c) = chunk;
    }
  } else {
    for (int i = threadIdx.x; i < kTile * kWidth; i += blockDim.x) {
      const int r = i / kWidth, c = i % kWidth;
      dst[r * dlc_ld(kWidth) + c] =
          first + r < count ? src[(first + r) * dlc_row_stride<kWidth>() + c] : dlc_from_float<T>(0.0f);
    }
  }
}

// One warp: out[16][kTile] (row stride kSw) = a[16][kWidth] · b[kTile][kWidth]ᵀ, a and b row-major
// tiles in shared memory.
template <int kWidth>
__device__ __forceinline__ void dlc_mma_abt(const T* a, const T* b, float* out) {
  FragC acc[kTile / 16];
#pragma unroll
  for (int n = 0; n < kTile / 16; ++n) wmma::fill_fragment(acc[n], 0.0f);
#pragma unroll
  for (int k0 = 0; k0 < kWidth; k0 += 16) {
    FragA fa;
    wmma::load_matrix_sync(fa, a + k0, dlc_ld(kWidth));
#pragma unroll
    for (int n = 0; n < kTile / 16; ++n) {
      FragBCol fb;
      wmma::load_matrix_sync(fb, b + n * 16 * dlc_ld(kWidth) + k0, dlc_ld(kWidth));
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
  __syncwarp();
#pragma unroll
  for (int n = 0; n < kTile / 16; ++n) wmma::store_matrix_sync(out + n * 16, acc[n], kSw, wmma::mem_row_major);
  __syncwarp();
}

// One warp: acc[16][kWidth] += a[16][kTile] · b[kTile][kWidth], a and b row-major tiles in shared
// memory.
template <int kWidth>
__device__ __forceinline__ void dlc_mma_ab(const T* a, const T* b, FragC (&acc)[kWidth / 16]) {
#pragma unroll
  for (int k0 = 0; k0 < kTile; k0 += 16) {
    FragA fa;
    wmma::load_matrix_sync(fa, a + k0, dlc_ld(kTile));
#pragma unroll
    for (int n = 0; n < kWidth / 16; ++n) {
      FragBRow fb;
      wmma::load_matrix_sync(fb, b + k0 * dlc_ld(kWidth) + n * 16, dlc_ld(kWidth));
      wmma::mma_sync(acc[n], fa, fb, acc[n]);
    }
  }
}

// One warp: factor * its f32 scratch rows [16][kWidth] (row stride kSw) to rows [first, first + 16)
// of a group's [count, kWidth] operand (rows dlc_row_stride apart), rows past count skipped;
// consecutive lanes write consecutive columns.
template <int kWidth>
__device__ __forceinline__ void dlc_store_scratch(const float* scratch, T* __restrict__ dst, long long first,
                                                  long long count, float factor) {
  for (int i = threadIdx.x & 31; i < 16 * kWidth; i += 32) {
    const int r = i / kWidth, c = i % kWidth;
    if (first + r < count)
      dst[(first + r) * dlc_row_stride<kWidth>() + c] = dlc_from_float<T>(scratch[r * kSw + c] * factor);
  }
}

// One warp: factor * acc to rows [first, first + 16) as dlc_store_scratch, through the warp's
// f32 scratch.
template <int kWidth>
__device__ __forceinline__ void dlc_store_rows(FragC (&acc)[kWidth / 16], float* scratch, T* __restrict__ dst,
                                               long long first, long long count, float factor) {
  __syncwarp();
#pragma unroll
  for (int n = 0; n < kWidth / 16; ++n) wmma::store_matrix_sync(scratch + n * 16, acc[n], kSw, wmma::mem_row_major);
  __syncwarp();
  dlc_store_scratch<kWidth>(scratch, dst, first, count, factor);
}

template <int kWidth>
__device__ __forceinline__ void dlc_zero(FragC (&acc)[kWidth / 16]) {
#pragma unroll
  for (int n = 0; n < kWidth / 16; ++n) wmma::fill_fragment(acc[n], 0.0f);
}
)";

// A warp's score rows: lanes 2r and 2r + 1 share row r of its 16, the even and the odd columns.
// One pass over the key tiles with an online softmax (FlashAttention-2): per tile the row's
// running max m grows to m', the running sum l and the lane's share of o (its columns, in
// registers) are rescaled by exp(m - m'), and p = exp(scale s - m') rounded to T meets the tile's
// values on the tensor cores, the product staged through the warp's scratch.
constexpr const char* kForward = R"(
extern "C" __global__ void __launch_bounds__(kWarps * 32) ${NAME}_fwd(
    const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, T* __restrict__ o,
    float* __restrict__ lse) {
  extern __shared__ __align__(128) unsigned char dlc_smem[];
  float* scratch = reinterpret_cast<float*>(dlc_smem);       // [kWarps][16][kSw]
  T* qs = reinterpret_cast<T*>(scratch + kWarps * 16 * kSw);  // [kTile][dlc_ld(kD)]
  T* ks = qs + kTile * dlc_ld(kD);                            // [kTile][dlc_ld(kD)]
  T* vs = ks + kTile * dlc_ld(kD);                            // [kTile][dlc_ld(kDv)]
  T* ps = vs + kTile * dlc_ld(kDv);                           // [kWarps][16][dlc_ld(kTile)]
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 1, odd = lane & 1;
  constexpr long long kRowTiles = (kRows + kTile - 1) / kTile;
  const long long g = blockIdx.x / kRowTiles, row0 = blockIdx.x % kRowTiles * kTile;
  const T* kg = k + dlc_group<kD>(g, kKeys);
  const T* vg = v + dlc_group<kDv>(g, kKeys);
  float* sw = scratch + warp * 16 * kSw;
  T* pw = ps + warp * 16 * dlc_ld(kTile);
  const T* qw = qs + warp * 16 * dlc_ld(kD);
  const long long row = row0 + warp * 16 + r, keys = dlc_keys_of(row);
  const long long key_end = dlc_keys_of(row0 + kTile - 1);  // the block's last tile of keys
  dlc_load_tile<kD>(qs, q + dlc_group<kD>(g, kRows), row0, kRows);

  float m = -dlc_inf(), l = 0.0f, acc[kDv / 2];  // acc[j]: column 2 j + odd of the row's o
#pragma unroll
  for (int j = 0; j < kDv / 2; ++j) acc[j] = 0.0f;
  for (long long key0 = 0; key0 < key_end; key0 += kTile) {
    __syncthreads();
    dlc_load_tile<kD>(ks, kg, key0, kKeys);
    dlc_load_tile<kDv>(vs, vg, key0, kKeys);
    __syncthreads();
    dlc_mma_abt<kD>(qw, ks, sw);
    float tile_max = -dlc_inf();
    for (int c = odd; c < kTile && key0 + c < keys; c += 2) tile_max = fmaxf(tile_max, sw[r * kSw + c] * kScale);
    const float m_new = fmaxf(m, fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1)));
    // m_new is finite from the first tile on (every row reads key 0); a row none of whose keys
    // are in this tile (causal) adds zeros and keeps its scale.
    const float alpha = m == -dlc_inf() ? 0.0f : __expf(m - m_new);
    float l_tile = 0.0f;
    for (int c = odd; c < kTile; c += 2) {
      const float p = key0 + c < keys ? __expf(sw[r * kSw + c] * kScale - m_new) : 0.0f;
      pw[r * dlc_ld(kTile) + c] = dlc_from_float<T>(p);
      l_tile += p;
    }
    l = l * alpha + l_tile;
    m = m_new;
    __syncwarp();
    FragC pv[kDv / 16];
    dlc_zero<kDv>(pv);
    dlc_mma_ab<kDv>(pw, vs, pv);
#pragma unroll
    for (int n = 0; n < kDv / 16; ++n) wmma::store_matrix_sync(sw + n * 16, pv[n], kSw, wmma::mem_row_major);
    __syncwarp();
#pragma unroll
    for (int j = 0; j < kDv / 2; ++j) acc[j] = acc[j] * alpha + sw[r * kSw + 2 * j + odd];
  }
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  if (lse && !odd && row < kRows) lse[g * kRows + row] = m + __logf(l);
  __syncwarp();
#pragma unroll
  for (int j = 0; j < kDv / 2; ++j) sw[r * kSw + 2 * j + odd] = acc[j] / l;
  __syncwarp();
  dlc_store_scratch<kDv>(sw, o + dlc_group<kDv>(g, kRows), row0 + warp * 16, kRows, 1.0f);
}
)";

constexpr const char* kDelta = R"(
// The backward's f32 workspace: D = Σ do·o per row ([groups x rows], padded to 256 bytes), then
// the query gradients' sums [groups x rows, kD], which the key-tile kernels add into.
constexpr long long kGroups = ${GROUPS};
constexpr long long kDeltaFloats = (kGroups * kRows + 63) / 64 * 64;
// One warp per row: its D, and its query gradient sums set to 0.
extern "C" __global__ void __launch_bounds__(256) ${NAME}_delta(
    const T* __restrict__ dout, const T* __restrict__ o, float* __restrict__ workspace) {
  const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
  if (row >= kGroups * kRows) return;
  const long long at = dlc_group<kDv>(row / kRows, kRows) + row % kRows * dlc_row_stride<kDv>();
  float s = 0.0f;
  for (int c = threadIdx.x & 31; c < kDv; c += 32) s += dlc_to_float(dout[at + c]) * dlc_to_float(o[at + c]);
  s = dlc_warp_sum(s);
  if ((threadIdx.x & 31) == 0) workspace[row] = s;
  for (int c = threadIdx.x & 31; c < kD; c += 32) workspace[kDeltaFloats + row * kD + c] = 0.0f;
}
)";

// The key and value gradients of one tile of keys, over every tile of rows: with sᵀ = k qᵀ,
// pᵀ = exp(scale sᵀ - lse), dpᵀ = v doᵀ and dsᵀ = pᵀ (dpᵀ - D): dv += pᵀ do, dk += dsᵀ q (times
// scale at the end). A warp's 16 keys are its score rows. The query gradients' share of the
// tile, ds k for the 64 rows, is added into the workspace's f32 sums (atomically: every key tile
// adds to them), as FlashAttention-2's backward does, instead of recomputing the scores per row
// tile; warp w adds rows 16 w … 16 w + 15, reading the four warps' dsᵀ as ds (column-major).
constexpr const char* kKeyGradients = R"(
extern "C" __global__ void __launch_bounds__(kWarps * 32) ${NAME}_dkdv(
    const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v, const T* __restrict__ dout,
    const float* __restrict__ lse, float* __restrict__ workspace, T* __restrict__ dk, T* __restrict__ dv) {
  extern __shared__ __align__(128) unsigned char dlc_smem[];
  float* scratch = reinterpret_cast<float*>(dlc_smem);  // [kWarps][2][16][kSw]: sᵀ, dpᵀ
  float* lse_s = scratch + kWarps * 2 * 16 * kSw;      // [kTile]
  float* delta_s = lse_s + kTile;                       // [kTile]
  T* ks = reinterpret_cast<T*>(delta_s + kTile);        // [kTile][dlc_ld(kD)]
  T* vs = ks + kTile * dlc_ld(kD);                      // [kTile][dlc_ld(kDv)]
  T* qs = vs + kTile * dlc_ld(kDv);                     // [kTile][dlc_ld(kD)]
  T* dos = qs + kTile * dlc_ld(kD);                     // [kTile][dlc_ld(kDv)]
  T* ps = dos + kTile * dlc_ld(kDv);                    // [kWarps][2][16][dlc_ld(kTile)]: pᵀ, dsᵀ
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 1, odd = lane & 1;
  constexpr long long kKeyTiles = (kKeys + kTile - 1) / kTile;
  const long long g = blockIdx.x / kKeyTiles, key0 = blockIdx.x % kKeyTiles * kTile;
  const T* qg = q + dlc_group<kD>(g, kRows);
  const T* dog = dout + dlc_group<kDv>(g, kRows);
  float* dq_sums = workspace + kDeltaFloats + g * kRows * kD;
  float* sw = scratch + warp * 2 * 16 * kSw;
  float* dpw = sw + 16 * kSw;
  T* pw = ps + warp * 2 * 16 * dlc_ld(kTile);
  T* dsw = pw + 16 * dlc_ld(kTile);
  dlc_load_tile<kD>(ks, k + dlc_group<kD>(g, kKeys), key0, kKeys);
  dlc_load_tile<kDv>(vs, v + dlc_group<kDv>(g, kKeys), key0, kKeys);
  FragC dk_acc[kD / 16], dv_acc[kDv / 16];
  dlc_zero<kD>(dk_acc);
  dlc_zero<kDv>(dv_acc);
  const long long key = key0 + warp * 16 + r;
  // Causal: the rows before the tile's first key read none of its keys.
  for (long long row0 = kCausal ? key0 : 0; row0 < kRows; row0 += kTile) {
    __syncthreads();
    dlc_load_tile<kD>(qs, qg, row0, kRows);
    dlc_load_tile<kDv>(dos, dog, row0, kRows);
    for (int i = threadIdx.x; i < kTile; i += blockDim.x) {
      const bool valid = row0 + i < kRows;
      lse_s[i] = valid ? lse[g * kRows + row0 + i] : 0.0f;
      delta_s[i] = valid ? workspace[g * kRows + row0 + i] : 0.0f;
    }
    __syncthreads();
    dlc_mma_abt<kD>(ks + warp * 16 * dlc_ld(kD), qs, sw);
    dlc_mma_abt<kDv>(vs + warp * 16 * dlc_ld(kDv), dos, dpw);
    for (int c = odd; c < kTile; c += 2) {
      const float p = row0 + c < kRows && key < dlc_keys_of(row0 + c)
                          ? __expf(sw[r * kSw + c] * kScale - lse_s[c]) : 0.0f;
      pw[r * dlc_ld(kTile) + c] = dlc_from_float<T>(p);
      dsw[r * dlc_ld(kTile) + c] = dlc_from_float<T>(p * (dpw[r * kSw + c] - delta_s[c]));
    }
    __syncthreads();  // every warp's dsᵀ, for the query gradients
    dlc_mma_ab<kDv>(pw, dos, dv_acc);
    dlc_mma_ab<kD>(dsw, qs, dk_acc);
    // ds k for rows 16 warp …: ds[i][key] = dsᵀ of the key's warp, column i.
    FragC dq_acc[kD / 16];
    dlc_zero<kD>(dq_acc);
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      FragACol fa;
      wmma::load_matrix_sync(fa, ps + (w * 2 + 1) * 16 * dlc_ld(kTile) + warp * 16, dlc_ld(kTile));
#pragma unroll
      for (int n = 0; n < kD / 16; ++n) {
        FragBRow fb;
        wmma::load_matrix_sync(fb, ks + w * 16 * dlc_ld(kD) + n * 16, dlc_ld(kD));
        wmma::mma_sync(dq_acc[n], fa, fb, dq_acc[n]);
      }
    }
#pragma unroll
    for (int n = 0; n < kD / 16; ++n) wmma::store_matrix_sync(sw + n * 16, dq_acc[n], kSw, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < 16 * kD; i += 32) {
      const int rr = i / kD, c = i % kD;
      const long long row = row0 + warp * 16 + rr;
      if (row < kRows) atomicAdd(dq_sums + row * kD + c, sw[rr * kSw + c]);
    }
  }
  dlc_store_rows<kDv>(dv_acc, sw, dv + dlc_group<kDv>(g, kKeys), key0 + warp * 16, kKeys, 1.0f);
  dlc_store_rows<kD>(dk_acc, sw, dk + dlc_group<kD>(g, kKeys), key0 + warp * 16, kKeys, kScale);
}
)";

// dq = scale times the workspace's sums, in q's layout and type: one thread per element.
constexpr const char* kQueryGradients = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}_dq(
    const float* __restrict__ workspace, T* __restrict__ dq) {
  const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
  if (i >= kGroups * kRows * kD) return;
  const long long row = i / kD;
  dq[dlc_group<kD>(row / kRows, kRows) + row % kRows * dlc_row_stride<kD>() + i % kD] =
      dlc_from_float<T>(workspace[kDeltaFloats + i] * kScale);
}
)";

void check(const AttentionSpec& spec) {
  if (spec.dtype != DType::F16 && spec.dtype != DType::BF16)
    throw Error(
        fmt::format("CUDA Attention: the tensor-core kernels take f16 or bf16, got {} (compile with "
                    "--attention unfused)",
                    dtype_name(spec.dtype)));
  for (int64_t d : {spec.depth, spec.value_depth})
    if (!cuda_attention_head_size(d))
      throw Error(
          fmt::format("CUDA Attention: head sizes must be multiples of 16 up to {}, got {} and {} (compile "
                      "with --attention unfused)",
                      kCudaAttentionMaxHeadSize, spec.depth, spec.value_depth));
  if (spec.seq_major && (spec.heads < 1 || spec.groups % spec.heads != 0))
    throw Error(
        fmt::format("CUDA Attention: {} groups are no whole batches of {} heads", spec.groups, spec.heads));
  if (spec.groups < 1 || spec.rows < 1 || spec.keys < 1)
    throw Error(fmt::format("CUDA Attention: empty problem [{}, {}, {}]", spec.groups, spec.rows, spec.keys));
}

// The kernels' common name and source head.
std::pair<std::string, std::string> head(const AttentionSpec& spec, const char* kind, bool reductions) {
  const std::string detail =
      fmt::format("{}_s{}{}{}", dims_tag({spec.groups, spec.rows, spec.keys, spec.depth, spec.value_depth}),
                  hex64(fnv1a64(float_literal(spec.scale))).substr(0, 8), spec.causal ? "_causal" : "",
                  spec.seq_major ? fmt::format("_h{}", spec.heads) : "");
  const std::string name = kernel_name(kind, spec.dtype, detail);
  std::string source = fmt::format(
      "// dlc {} kernels {}: {} groups of {} rows x {} keys, head sizes {} and {}, "
      "scale {}{}{} ({}).\n",
      kind, name, spec.groups, spec.rows, spec.keys, spec.depth, spec.value_depth, float_literal(spec.scale),
      spec.causal ? ", causal" : "",
      spec.seq_major ? fmt::format(", seq-major with {} heads", spec.heads) : "", dtype_name(spec.dtype));
  source += device_prelude({{spec.dtype}, false, reductions});
  source += fill(kCommon, {{"T", std::string(cuda_type(spec.dtype))},
                           {"D", fmt::format("{}", spec.depth)},
                           {"DV", fmt::format("{}", spec.value_depth)},
                           {"TILE", fmt::format("{}", kTile)},
                           {"WARPS", fmt::format("{}", kWarps)},
                           {"ROWS", fmt::format("{}", spec.rows)},
                           {"KEYS", fmt::format("{}", spec.keys)},
                           {"SCALE", float_literal(spec.scale)},
                           {"CAUSAL", spec.causal ? "true" : "false"},
                           {"SEQ_MAJOR", spec.seq_major ? "true" : "false"},
                           {"HEADS", fmt::format("{}", spec.seq_major ? spec.heads : 1)}});
  return {name, source};
}

int64_t tiles(int64_t n) { return (n + kTile - 1) / kTile; }

// The kernels' shared memory (their comments give the layouts): `scratch` f32 scratch tiles per
// warp, `stats` f32 row statistics, the T tiles of 64 rows of widths `widths`, and `p_tiles` T
// probability tiles per warp. Rows padded as the source's dlc_ld and kSw.
int64_t shared_bytes(const AttentionSpec& spec, int scratch, int stats, std::vector<int64_t> widths,
                     int p_tiles) {
  const int64_t sw = std::max<int64_t>(kTile, std::max(spec.depth, spec.value_depth)) + 4;
  int64_t elements = int64_t(kWarps) * p_tiles * 16 * (kTile + 8);
  for (int64_t w : widths) elements += kTile * (w + 8);
  return int64_t(kWarps) * scratch * 16 * sw * 4 + stats * kTile * 4 +
         elements * int64_t(dtype_size(spec.dtype));
}

LaunchConfig tile_launch(int64_t blocks, int64_t shared_bytes) {
  LaunchConfig c = launch_1d(blocks, kWarps * 32);
  c.shared_bytes = int(shared_bytes);
  return c;
}

}  // namespace

Shape attention_operand_dims(const AttentionSpec& spec, int64_t count, int64_t width) {
  if (spec.seq_major) return {spec.groups / spec.heads, count, spec.heads, width};
  return {spec.groups, count, width};
}

Shape attention_lse_dims(const AttentionSpec& spec) {
  if (spec.seq_major) return {spec.groups / spec.heads, spec.heads, spec.rows};
  return {spec.groups, spec.rows};
}

KernelSource emit_attention_forward(const AttentionSpec& spec) {
  check(spec);
  auto [name, source] = head(spec, "attention_fwd", false);
  source += fill(kForward, {{"NAME", name}});
  KernelSource ks = KernelSource::named("attention_fwd", name, std::move(source));
  const int64_t d = spec.depth, dv = spec.value_depth;
  ks.entries.push_back({name + "_fwd",
                        tile_launch(spec.groups * tiles(spec.rows), shared_bytes(spec, 1, 0, {d, d, dv}, 1)),
                        {"q", "k", "v", "o", "lse"}});
  return ks;
}

KernelSource emit_attention_backward(const AttentionSpec& spec) {
  check(spec);
  auto [name, source] = head(spec, "attention_bwd", true);
  source += fill(kDelta, {{"NAME", name}, {"GROUPS", fmt::format("{}", spec.groups)}});
  source += fill(kKeyGradients, {{"NAME", name}});
  source += fill(kQueryGradients, {{"NAME", name}});
  KernelSource ks = KernelSource::named("attention_bwd", name, std::move(source));
  const int64_t rows = spec.groups * spec.rows, d = spec.depth, dv = spec.value_depth;
  ks.entries.push_back({name + "_delta", launch_1d((rows + 7) / 8, 256), {"dout", "o", "workspace"}});
  ks.entries.push_back(
      {name + "_dkdv",
       tile_launch(spec.groups * tiles(spec.keys), shared_bytes(spec, 2, 2, {d, dv, d, dv}, 2)),
       {"q", "k", "v", "dout", "lse", "workspace", "dk", "dv"}});
  ks.entries.push_back({name + "_dq", launch_1d((rows * d + 255) / 256, 256), {"workspace", "dq"}});
  // kDeltaFloats (64-float multiples, 256 bytes) of D, then rows x depth query gradient sums.
  ks.workspace_bytes = align256(rows * 4) + rows * d * 4;
  return ks;
}

}  // namespace dlc::codegen::cuda
