// Softmax / log-softmax forward and backward kernels (softmax_emitter.h).
#include "codegen/cuda/softmax_emitter.h"

#include <fmt/format.h>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/row_mapping.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

constexpr const char* kForward = R"(
using T = ${T};

extern "C" __global__ void __launch_bounds__(${BLOCK}) ${NAME}(
    const T* __restrict__ x, T* __restrict__ y) {
  __shared__ float scratch[32];
  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
    const T* xr = x + dlc_row_base(row);
    float max = -dlc_inf();
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) max = fmaxf(max, dlc_to_float(xr[c * kInner]));
    max = dlc_row_max(max, scratch);
${SHIFT}    float sum = 0.0f;
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) sum += expf(dlc_to_float(xr[c * kInner]) - max);
    sum = dlc_row_sum(sum, scratch);
${WRITE}  }
}
)";

constexpr const char* kWriteSoftmax =
    R"(    T* yr = y + dlc_row_base(row);
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads)
      yr[c * kInner] = dlc_from_float<T>(expf(dlc_to_float(xr[c * kInner]) - max) / sum);
)";

constexpr const char* kWriteLogSoftmax = R"(    const float log_sum = max + logf(sum);
    T* yr = y + dlc_row_base(row);
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads)
      yr[c * kInner] = dlc_from_float<T>(dlc_to_float(xr[c * kInner]) - log_sum);
)";

// ReduceLogSumExp: a non-finite max (a row of -inf, or one with +inf) shifts by 0 instead.
constexpr const char* kShiftFinite = "    if (!isfinite(max)) max = 0.0f;\n";
constexpr const char* kWriteLogSumExp =
    R"(    if (dlc_row_lane() == 0) y[row] = dlc_from_float<T>(max + logf(sum));
)";

constexpr const char* kBackward = R"(
using T = ${T};

extern "C" __global__ void __launch_bounds__(${BLOCK}) ${NAME}(
    const T* __restrict__ dy, const T* __restrict__ y, T* __restrict__ dx) {
  __shared__ float scratch[32];
  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
    const Index base = dlc_row_base(row);
    float acc = 0.0f;
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) acc += ${TERM};
    acc = dlc_row_sum(acc, scratch);
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) {
      const Index j = base + c * kInner;
      dx[j] = dlc_from_float<T>(${GRAD});
    }
  }
}
)";

KernelSource emit(const SoftmaxSpec& spec, bool backward) {
  require_storage_float(spec.dtype, spec.lse   ? "CUDA ReduceLogSumExp"
                                    : spec.log ? "CUDA log-softmax"
                                               : "CUDA softmax");
  if (spec.lse && backward)
    throw Error("CUDA ReduceLogSumExp: no backward kernel (its gradient is other ops)");
  if (spec.outer < 1 || spec.extent < 1 || spec.inner < 1)
    throw Error(fmt::format("CUDA softmax: empty view [{}, {}, {}]", spec.outer, spec.extent, spec.inner));
  const RowLayout layout{spec.outer, spec.extent, spec.inner};
  const RowMapping m = row_mapping(layout);
  const std::string kind = spec.lse
                               ? std::string("logsumexp")
                               : fmt::format("{}softmax_{}", spec.log ? "log" : "", backward ? "bwd" : "fwd");
  const std::string name = kernel_name(kind, spec.dtype, dims_tag({spec.outer, spec.extent, spec.inner}));

  KernelSource ks = KernelSource::named(kind, name);
  ks.source = fmt::format("// dlc {} kernel {}: axis 1 of [{}, {}, {}] ({}).\n", kind, name, spec.outer,
                          spec.extent, spec.inner, dtype_name(spec.dtype));
  ks.source += device_prelude({{spec.dtype}, false, true});
  ks.source += row_helpers(layout, m);
  const TemplateVars common = {
      {"T", std::string(cuda_type(spec.dtype))}, {"BLOCK", fmt::format("{}", m.block)}, {"NAME", name}};
  KernelEntry e{name, launch_1d(m.grid, m.block), {}};
  if (!backward) {
    TemplateVars vars = common;
    vars.emplace_back("SHIFT", spec.lse ? kShiftFinite : "");
    vars.emplace_back("WRITE", spec.lse ? kWriteLogSumExp : spec.log ? kWriteLogSoftmax : kWriteSoftmax);
    ks.source += fill(kForward, vars);
    e.params = {"x", "y"};
  } else {
    TemplateVars vars = common;
    if (spec.log) {
      vars.emplace_back("TERM", "dlc_to_float(dy[base + c * kInner])");
      vars.emplace_back("GRAD", "dlc_to_float(dy[j]) - expf(dlc_to_float(y[j])) * acc");
    } else {
      vars.emplace_back("TERM", "dlc_to_float(dy[base + c * kInner]) * dlc_to_float(y[base + c * kInner])");
      vars.emplace_back("GRAD", "dlc_to_float(y[j]) * (dlc_to_float(dy[j]) - acc)");
    }
    ks.source += fill(kBackward, vars);
    e.params = {"dy", "y", "dx"};
  }
  ks.entries.push_back(e);
  return ks;
}

}  // namespace

KernelSource emit_softmax_forward(const SoftmaxSpec& spec) { return emit(spec, false); }
KernelSource emit_softmax_backward(const SoftmaxSpec& spec) { return emit(spec, true); }

}  // namespace dlc::codegen::cuda
