// ArgMax / ArgMin kernels (arg_extremum_emitter.h).
#include "codegen/cuda/arg_extremum_emitter.h"

#include <fmt/format.h>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

// The view both kernels read: [outer, extent, inner] of T.
constexpr const char* kView = R"(
using T = ${T};
using Index = ${INDEX};
constexpr Index kOuter = ${OUTER};
constexpr Index kExtent = ${EXTENT};
constexpr Index kInner = ${INNER};
)";

constexpr const char* kKernel = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ x, long long* __restrict__ y) {
  for (Index k = Index(blockIdx.x) * 256 + threadIdx.x; k < kOuter * kInner; k += Index(gridDim.x) * 256) {
    const T* p = x + k / kInner * (kExtent * kInner) + k % kInner;
    float best = dlc_to_float(p[0]);
    long long index = 0;
    for (Index j = 1; j < kExtent; ++j) {
      const float v = dlc_to_float(p[j * kInner]);
      if (${BETTER}) {
        best = v;
        index = j;
      }
    }
    y[k] = index;
  }
}
)";

constexpr const char* kTopK = R"(constexpr Index kK = ${K};
constexpr bool kLargest = ${LARGEST};

// Whether position a (value va) ranks before position b (value vb).
__device__ __forceinline__ bool dlc_ranks_before(float va, float vb, long long a, long long b) {
  const bool na = va != va, nb = vb != vb;
  if (na || nb) return na && nb ? a < b : kLargest == na;
  if (va != vb) return kLargest ? va > vb : va < vb;
  return a < b;
}

extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ x, long long* __restrict__ y) {
  for (Index line = Index(blockIdx.x) * 256 + threadIdx.x; line < kOuter * kInner; line += Index(gridDim.x) * 256) {
    const T* p = x + line / kInner * (kExtent * kInner) + line % kInner;
    long long prev = -1;
    float prev_v = 0.0f;
    for (Index j = 0; j < kK; ++j) {
      long long best = -1;
      float best_v = 0.0f;
      for (Index i = 0; i < kExtent; ++i) {
        const float v = dlc_to_float(p[i * kInner]);
        if (prev >= 0 && !dlc_ranks_before(prev_v, v, prev, i)) continue;
        if (best < 0 || dlc_ranks_before(v, best_v, i, best)) {
          best = i;
          best_v = v;
        }
      }
      y[(line / kInner * kK + j) * kInner + line % kInner] = best;
      prev = best;
      prev_v = best_v;
    }
  }
}
)";

// kView's variables and `more`.
TemplateVars view_vars(DType dtype, int64_t outer, int64_t extent, int64_t inner, TemplateVars more) {
  TemplateVars vars = {{"T", std::string(cuda_type(dtype))},
                       {"INDEX", std::string(index_type(outer * extent * inner))},
                       {"OUTER", fmt::format("{}", outer)},
                       {"EXTENT", fmt::format("{}", extent)},
                       {"INNER", fmt::format("{}", inner)}};
  vars.insert(vars.end(), more.begin(), more.end());
  return vars;
}

}  // namespace

KernelSource emit_top_k_indices(const TopKSpec& spec) {
  require_storage_float(spec.dtype, "CUDA TopKIndices");
  if (spec.outer < 1 || spec.extent < 1 || spec.inner < 1 || spec.k < 0 || spec.k > spec.extent)
    throw Error(fmt::format("CUDA TopKIndices: k {} of view [{}, {}, {}]", spec.k, spec.outer, spec.extent,
                            spec.inner));
  const std::string kind = spec.largest ? "topk" : "bottomk";
  const std::string name = kernel_name(
      kind, spec.dtype, fmt::format("k{}_{}", spec.k, dims_tag({spec.outer, spec.extent, spec.inner})));
  KernelSource ks = KernelSource::named(kind, name);
  ks.source =
      fmt::format("// dlc {} kernel: {}, the {} {} positions over the middle axis of [{}, {}, {}] ({}).\n",
                  kind, name, spec.k, spec.largest ? "largest" : "smallest", spec.outer, spec.extent,
                  spec.inner, dtype_name(spec.dtype));
  ks.source += device_prelude({{spec.dtype}, false, false});
  ks.source += fill(std::string(kView) + kTopK, view_vars(spec.dtype, spec.outer, spec.extent, spec.inner,
                                                          {{"K", fmt::format("{}", spec.k)},
                                                           {"LARGEST", spec.largest ? "true" : "false"},
                                                           {"NAME", name}}));
  ks.entries.push_back({name, launch_1d(grid_for(spec.outer * spec.inner, 256), 256), {"x", "y"}});
  return ks;
}

KernelSource emit_arg_extremum(const ArgExtremumSpec& spec) {
  require_storage_float(spec.dtype, "CUDA ArgMax/ArgMin");
  if (spec.outer < 1 || spec.extent < 1 || spec.inner < 1)
    throw Error(
        fmt::format("CUDA ArgMax/ArgMin: empty view [{}, {}, {}]", spec.outer, spec.extent, spec.inner));
  const std::string kind = spec.max ? "argmax" : "argmin";
  const std::string name = kernel_name(fmt::format("{}{}", kind, spec.last ? "_last" : ""), spec.dtype,
                                       dims_tag({spec.outer, spec.extent, spec.inner}));
  KernelSource ks = KernelSource::named(kind, name);
  ks.source = fmt::format(
      "// dlc {} kernel: {} over the middle axis of [{}, {}, {}] ({}), the {} extremum.\n", kind, name,
      spec.outer, spec.extent, spec.inner, dtype_name(spec.dtype), spec.last ? "last" : "first");
  ks.source += device_prelude({{spec.dtype}, false, false});
  const char* better =
      spec.max ? (spec.last ? "v >= best" : "v > best") : (spec.last ? "v <= best" : "v < best");
  ks.source += fill(std::string(kView) + kKernel, view_vars(spec.dtype, spec.outer, spec.extent, spec.inner,
                                                            {{"NAME", name}, {"BETTER", better}}));
  ks.entries.push_back({name, launch_1d(grid_for(spec.outer * spec.inner, 256), 256), {"x", "y"}});
  return ks;
}

}  // namespace dlc::codegen::cuda
