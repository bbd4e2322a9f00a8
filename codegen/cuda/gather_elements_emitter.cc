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

// Both kernels: a grid-stride loop over elements i of the result, with the coordinates o<d>.
constexpr const char* kHead = R"(
using Index = ${INDEX};
using T = ${T};
using I = ${I};
constexpr Index kNumel = ${NUMEL};
constexpr long long kAxisDim = ${AXIS_DIM};

// ${SUMMARY}
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ in0, const I* __restrict__ in1, T* __restrict__ out0) {
  const Index stride = Index(gridDim.x) * 256;
  for (Index i = Index(blockIdx.x) * 256 + Index(threadIdx.x); i < kNumel; i += stride) {
${COORDS})";

constexpr const char* kForward = R"(    long long j = (long long)in1[i];
    if (j < 0) j += kAxisDim;
    out0[i] = j >= 0 && j < kAxisDim ? in0[${OFFSET}] : ${ZERO};
  }
}
)";

constexpr const char* kBackward = R"(    double sum = 0.0;
    if (${INSIDE}) {
      const Index line = ${LINE};
      for (Index k = 0; k < ${COUNT}; ++k) {
        long long j = (long long)in1[line + k * ${STEP}];
        if (j < 0) j += kAxisDim;
        if (j == (long long)o${AXIS}) sum += double(dlc_to_float(in0[line + k * ${STEP}]));
      }
    }
    out0[i] = dlc_from_float<T>(float(sum));
  }
}
)";

// The spec's checks, shared by both directions.
void check(const GatherElementsSpec& spec, const char* what) {
  require_index_type(spec.index_dtype, what);
  const size_t rank = spec.data.size();
  if (spec.out.size() != rank)
    throw Error(
        fmt::format("{}: indices {} do not have the data's rank ({})", what, shape_str(spec.out), rank));
  if (spec.axis < 0 || spec.axis >= int64_t(rank))
    throw Error(fmt::format("{}: axis {} out of range for rank {}", what, spec.axis, rank));
  for (size_t d = 0; d < rank; ++d)
    if (int64_t(d) != spec.axis && spec.out[d] > spec.data[d])
      throw Error(fmt::format("{}: indices {} exceed the data {} on axis {}", what, shape_str(spec.out),
                              shape_str(spec.data), d));
}

std::string spec_detail(const GatherElementsSpec& spec) {
  return fmt::format("{}_{}_axis{}_{}", dims_tag(spec.data), dims_tag(spec.out), spec.axis,
                     dtype_name(spec.index_dtype));
}

}  // namespace

KernelSource emit_gather_elements(const GatherElementsSpec& spec) {
  check(spec, "CUDA GatherElements");
  const size_t rank = spec.data.size();
  std::vector<std::string> terms;
  int64_t pitch = 1;
  for (size_t d = rank; d-- > 0;) {
    const bool on_axis = int64_t(d) == spec.axis;
    const std::string c = on_axis ? "Index(j)" : fmt::format("o{}", d);
    terms.insert(terms.begin(), pitch == 1 ? c : fmt::format("{} * {}", c, pitch));
    pitch *= spec.data[d];
  }
  const std::string type(cuda_type(spec.dtype));  // throws for f64, i8
  const int64_t numel = num_elements(spec.out);
  const std::string name = kernel_name("gather_elements", spec.dtype, spec_detail(spec));
  KernelSource ks = KernelSource::named("gather_elements", name);
  ks.source = fmt::format("// dlc GatherElements kernel {}: data [{}] by indices [{}] ({}) on axis {}.\n",
                          name, fmt::join(spec.data, ", "), fmt::join(spec.out, ", "),
                          dtype_name(spec.index_dtype), spec.axis);
  ks.source += device_prelude({{spec.dtype}, false, false});
  ks.source +=
      fill(std::string(kHead) + kForward,
           {{"SUMMARY", fmt::format("Output element i of [{}]: the data element at index j on the axis.",
                                    fmt::join(spec.out, ", "))},
            {"INDEX", std::string(index_type(std::max(numel, num_elements(spec.data))))},
            {"T", type},
            {"I", std::string(cuda_type(spec.index_dtype))},
            {"NUMEL", fmt::format("{}", numel)},
            {"AXIS_DIM", fmt::format("{}", spec.data[size_t(spec.axis)])},
            {"NAME", name},
            {"COORDS", coordinate_decls(spec.out, spec.axis)},
            {"OFFSET", fmt::format("{}", fmt::join(terms, " + "))},
            {"ZERO", storage_value(spec.dtype, 0)}});
  ks.entries.push_back({name, launch_1d(grid_for(numel, 256), 256), {"in0", "in1", "out0"}});
  return ks;
}

KernelSource emit_gather_elements_backward(const GatherElementsSpec& spec) {
  check(spec, "CUDA GatherElementsGrad");
  if (!is_storage_float(spec.dtype))
    throw Error(fmt::format("CUDA GatherElementsGrad: dtype {} (f32, f16, bf16)", dtype_name(spec.dtype)));
  const size_t rank = spec.data.size();
  // The indices' line of dx element o: o's coordinates off the axis in the indices' pitches.
  std::vector<std::string> line, inside;
  int64_t pitch = 1, step = 1;
  for (size_t d = rank; d-- > 0;) {
    if (int64_t(d) == spec.axis) {
      step = pitch;
    } else {
      line.insert(line.begin(), pitch == 1 ? fmt::format("o{}", d) : fmt::format("o{} * {}", d, pitch));
      if (spec.out[d] < spec.data[d]) inside.push_back(fmt::format("o{} < {}", d, spec.out[d]));
    }
    pitch *= spec.out[d];
  }
  const int64_t numel = num_elements(spec.data);
  const std::string name = kernel_name("gather_elements_grad", spec.dtype, spec_detail(spec));
  KernelSource ks = KernelSource::named("gather_elements", name);
  ks.source = fmt::format(
      "// dlc GatherElementsGrad kernel {}: dy [{}] by indices ({}) into [{}] on axis {}.\n", name,
      fmt::join(spec.out, ", "), dtype_name(spec.index_dtype), fmt::join(spec.data, ", "), spec.axis);
  ks.source += device_prelude({{spec.dtype}, false, false});
  ks.source +=
      fill(std::string(kHead) + kBackward,
           {{"SUMMARY", fmt::format("dx element i of [{}]: the sum, in index order and in double, of the dy "
                                    "elements on its line whose index on the axis is its o{}.",
                                    fmt::join(spec.data, ", "), spec.axis)},
            {"INDEX", std::string(index_type(std::max(numel, num_elements(spec.out))))},
            {"T", std::string(cuda_type(spec.dtype))},
            {"I", std::string(cuda_type(spec.index_dtype))},
            {"NUMEL", fmt::format("{}", numel)},
            {"AXIS_DIM", fmt::format("{}", spec.data[size_t(spec.axis)])},
            {"AXIS", fmt::format("{}", spec.axis)},
            {"NAME", name},
            {"COORDS", coordinate_decls(spec.data)},
            {"INSIDE", inside.empty() ? "true" : fmt::format("{}", fmt::join(inside, " && "))},
            {"LINE", line.empty() ? "0" : fmt::format("{}", fmt::join(line, " + "))},
            {"COUNT", fmt::format("{}", spec.out[size_t(spec.axis)])},
            {"STEP", fmt::format("{}", step)}});
  ks.entries.push_back({name, launch_1d(grid_for(numel, 256), 256), {"in0", "in1", "out0"}});
  return ks;
}

}  // namespace dlc::codegen::cuda
