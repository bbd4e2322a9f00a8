// GatherElements kernels (gather_elements_emitter.h).
#include "codegen/cuda/gather_elements_emitter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

constexpr const char* kKernel = R"(
using Index = ${INDEX};
using T = ${T};
using I = ${I};
constexpr Index kNumel = ${NUMEL};
constexpr long long kAxisDim = ${AXIS_DIM};

// Output element i of [${DIMS}]: its coordinates o<d>, then the data element at index j on the axis.
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ in0, const I* __restrict__ in1, T* __restrict__ out0) {
  const Index stride = Index(gridDim.x) * 256;
  for (Index i = Index(blockIdx.x) * 256 + Index(threadIdx.x); i < kNumel; i += stride) {
${COORDS}    long long j = (long long)in1[i];
    if (j < 0) j += kAxisDim;
    out0[i] = j >= 0 && j < kAxisDim ? in0[${OFFSET}] : ${ZERO};
  }
}
)";

}  // namespace

KernelSource emit_gather_elements(const GatherElementsSpec& spec) {
  require_index_type(spec.index_dtype, "CUDA GatherElements indices");
  const size_t rank = spec.data.size();
  if (spec.out.size() != rank)
    throw Error(fmt::format("CUDA GatherElements: indices {} do not have the data's rank ({})",
                            shape_str(spec.out), rank));
  if (spec.axis < 0 || spec.axis >= int64_t(rank))
    throw Error(fmt::format("CUDA GatherElements: axis {} out of range for rank {}", spec.axis, rank));
  std::vector<std::string> terms;
  int64_t pitch = 1;
  for (size_t d = rank; d-- > 0;) {
    const bool on_axis = int64_t(d) == spec.axis;
    if (!on_axis && spec.out[d] > spec.data[d])
      throw Error(fmt::format("CUDA GatherElements: indices {} exceed the data {} on axis {}",
                              shape_str(spec.out), shape_str(spec.data), d));
    const std::string c = on_axis ? "Index(j)" : fmt::format("o{}", d);
    terms.insert(terms.begin(), pitch == 1 ? c : fmt::format("{} * {}", c, pitch));
    pitch *= spec.data[d];
  }
  const std::string type(cuda_type(spec.dtype));  // throws for f64, i8
  const int64_t numel = num_elements(spec.out);
  const std::string name = kernel_name("gather_elements", spec.dtype,
                                       fmt::format("{}_{}_axis{}_{}", dims_tag(spec.data), dims_tag(spec.out),
                                                   spec.axis, dtype_name(spec.index_dtype)));
  KernelSource ks = KernelSource::named("gather_elements", name);
  ks.source = fmt::format("// dlc GatherElements kernel {}: data [{}] by indices [{}] ({}) on axis {}.\n",
                          name, fmt::join(spec.data, ", "), fmt::join(spec.out, ", "),
                          dtype_name(spec.index_dtype), spec.axis);
  ks.source += device_prelude({{spec.dtype}, false, false});
  ks.source += fill(kKernel, {{"INDEX", std::string(index_type(std::max(numel, num_elements(spec.data))))},
                              {"T", type},
                              {"I", std::string(cuda_type(spec.index_dtype))},
                              {"NUMEL", fmt::format("{}", numel)},
                              {"AXIS_DIM", fmt::format("{}", spec.data[size_t(spec.axis)])},
                              {"DIMS", fmt::format("{}", fmt::join(spec.out, ", "))},
                              {"NAME", name},
                              {"COORDS", coordinate_decls(spec.out, spec.axis)},
                              {"OFFSET", fmt::format("{}", fmt::join(terms, " + "))},
                              {"ZERO", storage_value(spec.dtype, 0)}});
  ks.entries.push_back({name, launch_1d(grid_for(numel, 256), 256), {"in0", "in1", "out0"}});
  return ks;
}

}  // namespace dlc::codegen::cuda
