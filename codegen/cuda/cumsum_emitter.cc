// CumSum kernels (cumsum_emitter.h).
#include "codegen/cuda/cumsum_emitter.h"

#include <fmt/format.h>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

constexpr const char* kKernel = R"(
using T = ${T};
using Acc = ${ACC};
using Index = ${INDEX};
constexpr Index kOuter = ${OUTER};
constexpr Index kExtent = ${EXTENT};
constexpr Index kInner = ${INNER};
constexpr bool kExclusive = ${EXCLUSIVE};
constexpr bool kReverse = ${REVERSE};

extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ in0, T* __restrict__ out0) {
  for (Index k = Index(blockIdx.x) * 256 + threadIdx.x; k < kOuter * kInner; k += Index(gridDim.x) * 256) {
    const Index base = k / kInner * (kExtent * kInner) + k % kInner;
    Acc acc = 0;
    for (Index j = 0; j < kExtent; ++j) {
      const Index e = base + (kReverse ? kExtent - 1 - j : j) * kInner;
      const Acc v = Acc(in0[e]);
      const Acc result = kExclusive ? acc : acc + v;
      out0[e] = T(result);
      acc += v;
    }
  }
}
)";

}  // namespace

CumSumSpec cumsum_spec(const Attrs& attrs, const TensorType& x) {
  CumSumSpec spec;
  spec.dtype = x.dtype;
  spec.exclusive = attrs.i("exclusive", 0) != 0;
  spec.reverse = attrs.i("reverse", 0) != 0;
  set_view(spec, axis_view(x.shape, attrs.i("axis", 0)));
  return spec;
}

KernelSource emit_cumsum(const CumSumSpec& spec) {
  const bool integer = spec.dtype == DType::I32 || spec.dtype == DType::I64;
  if (!integer && spec.dtype != DType::F32)
    throw Error(
        fmt::format("CUDA CumSum: dtype {} (f32, i32, i64, as the CPU kernel)", dtype_name(spec.dtype)));
  const std::string name =
      kernel_name("cumsum", spec.dtype,
                  fmt::format("{}{}{}", dims_tag({spec.outer, spec.extent, spec.inner}),
                              spec.exclusive ? "_exclusive" : "", spec.reverse ? "_reverse" : ""));
  KernelSource ks = KernelSource::named("cumsum", name);
  ks.source = fmt::format("// dlc CumSum kernel {}: over the middle axis of [{}, {}, {}] ({}{}{}).\n", name,
                          spec.outer, spec.extent, spec.inner, dtype_name(spec.dtype),
                          spec.exclusive ? ", exclusive" : "", spec.reverse ? ", reversed" : "");
  ks.source += device_prelude({{spec.dtype}, false, false});
  ks.source += fill(kKernel, {{"T", std::string(cuda_type(spec.dtype))},
                              {"ACC", integer ? "long long" : "double"},
                              {"INDEX", std::string(index_type(spec.outer * spec.extent * spec.inner))},
                              {"OUTER", fmt::format("{}", spec.outer)},
                              {"EXTENT", fmt::format("{}", spec.extent)},
                              {"INNER", fmt::format("{}", spec.inner)},
                              {"EXCLUSIVE", spec.exclusive ? "true" : "false"},
                              {"REVERSE", spec.reverse ? "true" : "false"},
                              {"NAME", name}});
  ks.entries.push_back({name, launch_1d(grid_for(spec.outer * spec.inner, 256), 256), {"in0", "out0"}});
  return ks;
}

}  // namespace dlc::codegen::cuda
