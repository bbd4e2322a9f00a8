// ArgMax / ArgMin kernels (arg_extremum_emitter.h).
#include "codegen/cuda/arg_extremum_emitter.h"

#include <fmt/format.h>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

constexpr const char* kKernel = R"(
using T = ${T};
using Index = ${INDEX};
constexpr Index kOuter = ${OUTER};
constexpr Index kExtent = ${EXTENT};
constexpr Index kInner = ${INNER};

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

}  // namespace

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
  ks.source += fill(kKernel, {{"T", std::string(cuda_type(spec.dtype))},
                              {"INDEX", std::string(index_type(spec.outer * spec.extent * spec.inner))},
                              {"OUTER", fmt::format("{}", spec.outer)},
                              {"EXTENT", fmt::format("{}", spec.extent)},
                              {"INNER", fmt::format("{}", spec.inner)},
                              {"NAME", name},
                              {"BETTER", better}});
  ks.entries.push_back({name, launch_1d(grid_for(spec.outer * spec.inner, 256), 256), {"x", "y"}});
  return ks;
}

}  // namespace dlc::codegen::cuda
