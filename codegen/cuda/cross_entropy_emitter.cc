// Softmax cross-entropy forward and backward kernels (cross_entropy_emitter.h).
#include "codegen/cuda/cross_entropy_emitter.h"

#include <fmt/format.h>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/row_mapping.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

// Shared by forward and backward: types, the label rule and the row's max and sum of exp.
constexpr const char* kCommon = R"(
using T = ${T};
using Label = ${LABEL};
constexpr bool kHasIgnore = ${HAS_IGNORE};
constexpr long long kIgnoreIndex = ${IGNORE_INDEX};

__device__ __forceinline__ bool dlc_ignored(long long label) { return kHasIgnore && label == kIgnoreIndex; }

// The max of a row of scores and the sum of exp(score - max), in every lane of the row.
__device__ __forceinline__ void dlc_row_softmax_stats(const T* __restrict__ xr, float* scratch, float& max,
                                                      float& sum) {
  max = -dlc_inf();
  for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) max = fmaxf(max, dlc_to_float(xr[c * kInner]));
  max = dlc_row_max(max, scratch);
  sum = 0.0f;
  for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) sum += expf(dlc_to_float(xr[c * kInner]) - max);
  sum = dlc_row_sum(sum, scratch);
}
)";

// Row p (one position) of the loss: -w[label] * log_softmax(scores)[label] (w 1 without class
// weights), or, for NegativeLogLikelihoodLoss, whose scores are log-probabilities already,
// -w[label] * scores[label]. The mean divides by the summed weights of the counted positions.
constexpr const char* kForwardRows = R"(
extern "C" __global__ void __launch_bounds__(${BLOCK}) ${NAME}(
    const T* __restrict__ scores, const Label* __restrict__ labels, const T* __restrict__ weight,
    float* __restrict__ workspace, T* __restrict__ loss, T* __restrict__ log_prob) {
${SCRATCH}  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
    const Index base = dlc_row_base(row);
${LOG_SUM}    if (dlc_row_lane() == 0) {
      const long long label = labels[row];
      const bool counted = !dlc_ignored(label);
      const bool valid = label >= 0 && label < kExtent;
      const float w = !counted ? 0.0f : weight && valid ? dlc_to_float(weight[label]) : 1.0f;
      const float l = !counted ? 0.0f : valid ? (log_sum - dlc_to_float(scores[base + label * kInner])) * w : dlc_nan();
${STORE}    }
  }
}
)";

// The log of the row's softmax denominator (stored log-probabilities too, where asked for).
constexpr const char* kSoftmaxLogSum = R"(    float max, sum;
    dlc_row_softmax_stats(scores + base, scratch, max, sum);
    const float log_sum = max + logf(sum);
    if (log_prob)
      for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads)
        log_prob[base + c * kInner] = dlc_from_float<T>(dlc_to_float(scores[base + c * kInner]) - log_sum);
)";
constexpr const char* kLogProbabilities =
    "    constexpr float log_sum = 0.0f;  // the scores are log-probabilities\n";

constexpr const char* kStoreNone = "      loss[row] = dlc_from_float<T>(l);\n";
constexpr const char* kStoreWorkspace = R"(      workspace[row] = l;
      workspace[kCountOffset + row] = w;
)";

// One block adds up the per-position losses (and weights, for the mean).
constexpr const char* kForwardFinal = R"(
extern "C" __global__ void __launch_bounds__(1024) ${NAME}(
    const float* __restrict__ workspace, T* __restrict__ loss) {
  __shared__ float scratch[32];
  float l = 0.0f, n = 0.0f;
  for (Index p = threadIdx.x; p < kRows; p += 1024) {
    l += workspace[p];
    n += workspace[kCountOffset + p];
  }
  l = dlc_block_sum(l, scratch);
  n = dlc_block_sum(n, scratch);
  if (threadIdx.x == 0) loss[0] = dlc_from_float<T>(${RESULT});
}
)";

constexpr const char* kBackwardCount = R"(
extern "C" __global__ void __launch_bounds__(1024) ${NAME}(
    const Label* __restrict__ labels, float* __restrict__ workspace) {
  __shared__ float scratch[32];
  float n = 0.0f;
  for (Index p = threadIdx.x; p < kRows; p += 1024) n += dlc_ignored(labels[p]) ? 0.0f : 1.0f;
  n = dlc_block_sum(n, scratch);
  if (threadIdx.x == 0) workspace[0] = n;
}
)";

// dscores = g * (softmax(scores) - onehot(label)), g the loss gradient of the row.
constexpr const char* kBackwardRows = R"(
extern "C" __global__ void __launch_bounds__(${BLOCK}) ${NAME}(
    const T* __restrict__ dloss, const T* __restrict__ scores, const Label* __restrict__ labels,
    const float* __restrict__ workspace, T* __restrict__ dscores) {
  __shared__ float scratch[32];
  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
    const Index base = dlc_row_base(row);
    const long long label = labels[row];
    if (dlc_ignored(label)) {
      for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) dscores[base + c * kInner] = dlc_from_float<T>(0.0f);
      continue;
    }
    float max, sum;
    dlc_row_softmax_stats(scores + base, scratch, max, sum);
    float g = ${ROW_GRAD};
    if (label < 0 || label >= kExtent) g = dlc_nan();
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) {
      const float prob = expf(dlc_to_float(scores[base + c * kInner]) - max) / sum;
      dscores[base + c * kInner] = dlc_from_float<T>(g * (prob - (c == label ? 1.0f : 0.0f)));
    }
  }
}
)";

void check(const CrossEntropySpec& spec) {
  require_storage_float(spec.dtype, "CUDA cross-entropy");
  require_index_type(spec.label_dtype, "CUDA cross-entropy labels");
  if (spec.reduction != "mean" && spec.reduction != "sum" && spec.reduction != "none")
    throw Error(fmt::format("CUDA cross-entropy: unknown reduction '{}' (mean, sum, none)", spec.reduction));
  if (spec.batch < 1 || spec.classes < 1 || spec.inner < 1)
    throw Error(
        fmt::format("CUDA cross-entropy: empty scores [{}, {}, {}]", spec.batch, spec.classes, spec.inner));
}

struct Prepared {
  RowLayout layout;
  RowMapping mapping;
  std::string base;
  std::string source;
};

Prepared prepare(const CrossEntropySpec& spec, const char* kind) {
  check(spec);
  Prepared p;
  p.layout = {spec.batch, spec.classes, spec.inner};
  p.mapping = row_mapping(p.layout);
  p.base = kernel_name(kind, spec.dtype,
                       fmt::format("{}_{}{}", dims_tag({spec.batch, spec.classes, spec.inner}),
                                   spec.reduction, spec.ignore_index ? "_ignore" : ""));
  p.source = fmt::format("// dlc {} kernel {}: scores [{}, {}, {}] ({}), labels {}, reduction {}{}.\n", kind,
                         p.base, spec.batch, spec.classes, spec.inner, dtype_name(spec.dtype),
                         dtype_name(spec.label_dtype), spec.reduction,
                         spec.ignore_index ? fmt::format(", ignore_index {}", *spec.ignore_index) : "");
  p.source += device_prelude({{spec.dtype}, false, true});
  p.source += row_helpers(p.layout, p.mapping);
  p.source += fill(kCommon, {{"T", std::string(cuda_type(spec.dtype))},
                             {"LABEL", std::string(cuda_type(spec.label_dtype))},
                             {"HAS_IGNORE", spec.ignore_index ? "true" : "false"},
                             {"IGNORE_INDEX", fmt::format("{}ll", spec.ignore_index.value_or(0))}});
  return p;
}

}  // namespace

KernelSource emit_cross_entropy_forward(const CrossEntropySpec& spec) {
  const char* kind = spec.log_probabilities ? "nll_loss_fwd" : "cross_entropy_fwd";
  Prepared p = prepare(spec, kind);
  const bool none = spec.reduction == "none";
  const int64_t rows = p.layout.rows();
  const int64_t count_offset = align256(rows * 4) / 4;  // in floats
  KernelSource ks = KernelSource::named(kind, p.base, std::move(p.source));
  if (!none) ks.source += fmt::format("constexpr Index kCountOffset = {};  // floats\n", count_offset);
  const KernelEntry rows_entry{p.base + "_rows",
                               launch_1d(p.mapping.grid, p.mapping.block),
                               {"scores", "labels", "weight", "workspace", "loss", "log_prob"}};
  ks.source +=
      fill(kForwardRows, {{"BLOCK", fmt::format("{}", p.mapping.block)},
                          {"NAME", rows_entry.name},
                          {"LOG_SUM", spec.log_probabilities ? kLogProbabilities : kSoftmaxLogSum},
                          {"SCRATCH", spec.log_probabilities ? "" : "  __shared__ float scratch[32];\n"},
                          {"STORE", none ? kStoreNone : kStoreWorkspace}});
  ks.entries.push_back(rows_entry);
  if (!none) {
    const KernelEntry final_entry{p.base + "_final", launch_1d(1, 1024), {"workspace", "loss"}};
    ks.source += fill(kForwardFinal,
                      {{"NAME", final_entry.name}, {"RESULT", spec.reduction == "mean" ? "l / n" : "l"}});
    ks.entries.push_back(final_entry);
    ks.workspace_bytes = align256(2 * count_offset * 4);
  }
  return ks;
}

KernelSource emit_cross_entropy_backward(const CrossEntropySpec& spec) {
  if (spec.log_probabilities)
    throw Error("CUDA cross-entropy: no backward kernel for NegativeLogLikelihoodLoss");
  Prepared p = prepare(spec, "cross_entropy_bwd");
  const bool mean = spec.reduction == "mean";
  const bool count = mean && spec.ignore_index.has_value();
  KernelSource ks = KernelSource::named("cross_entropy_bwd", p.base, std::move(p.source));
  if (count) {
    const KernelEntry count_entry{p.base + "_count", launch_1d(1, 1024), {"labels", "workspace"}};
    ks.source += fill(kBackwardCount, {{"NAME", count_entry.name}});
    ks.entries.push_back(count_entry);
    ks.workspace_bytes = 256;
  }
  // The loss gradient of a row: dloss[row] (none), dloss[0] (sum), or dloss[0] / counted (mean).
  std::string row_grad = spec.reduction == "none" ? "dlc_to_float(dloss[row])" : "dlc_to_float(dloss[0])";
  if (count)
    row_grad += " * (workspace[0] > 0.0f ? 1.0f / workspace[0] : 0.0f)";
  else if (mean)
    row_grad += fmt::format(" * (1.0f / {})", float_literal(double(p.layout.rows())));
  const KernelEntry rows_entry{p.base + "_rows",
                               launch_1d(p.mapping.grid, p.mapping.block),
                               {"dloss", "scores", "labels", "workspace", "dscores"}};
  ks.source += fill(
      kBackwardRows,
      {{"BLOCK", fmt::format("{}", p.mapping.block)}, {"NAME", rows_entry.name}, {"ROW_GRAD", row_grad}});
  ks.entries.push_back(rows_entry);
  return ks;
}

}  // namespace dlc::codegen::cuda
