// Layer normalization forward and backward kernels (layer_norm_emitter.h).
#include "codegen/cuda/layer_norm_emitter.h"

#include <fmt/format.h>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/row_mapping.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

// Mean and 1 / sqrt(variance + epsilon) of row `xr`, in every lane of the row (two passes).
constexpr const char* kStatistics = R"(
using T = ${T};
using Y = ${Y};  // y's and dy's type: T, or a half type where T is f32 (mixed precision)
constexpr float kEpsilon = ${EPSILON};

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
)";

constexpr const char* kForward = R"(
constexpr bool kHasBias = ${HAS_BIAS};

extern "C" __global__ void __launch_bounds__(${BLOCK}) ${NAME}(
    const T* __restrict__ x, const T* __restrict__ scale, const T* __restrict__ bias,
    Y* __restrict__ y, float* __restrict__ mean_out, float* __restrict__ inv_std_out) {
  __shared__ float scratch[32];
  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
    const T* xr = x + dlc_row_base(row);
    Y* yr = y + dlc_row_base(row);
    float mean, inv_std;
    dlc_row_statistics(xr, scratch, mean, inv_std);
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) {
      const Index p = ${PARAM_INDEX};
      const float b = kHasBias ? dlc_to_float(bias[p]) : 0.0f;
      yr[c] = dlc_from_float<Y>((dlc_to_float(xr[c]) - mean) * inv_std * dlc_to_float(scale[p]) + b);
    }
    if (dlc_row_lane() == 0) {
      if (mean_out) mean_out[row] = mean;
      if (inv_std_out) inv_std_out[row] = inv_std;
    }
  }
}
)";

// dx = inv_std * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * scale, xhat the normalized x.
constexpr const char* kBackwardDx = R"(
extern "C" __global__ void __launch_bounds__(${BLOCK}) ${NAME}(
    const Y* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ scale,
    T* __restrict__ dx, float* __restrict__ workspace) {
  __shared__ float scratch[32];
  float* mean_ws = workspace;
  float* inv_std_ws = workspace + kRows;
  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
    const Index base = dlc_row_base(row);
    float mean, inv_std;
    dlc_row_statistics(x + base, scratch, mean, inv_std);
    float sum_g = 0.0f, sum_g_xhat = 0.0f;
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) {
      const float g = dlc_to_float(dy[base + c]) * dlc_to_float(scale[c]);
      sum_g += g;
      sum_g_xhat += g * (dlc_to_float(x[base + c]) - mean) * inv_std;
    }
    const float mean_g = dlc_row_sum(sum_g, scratch) / float(kExtent);
    const float mean_g_xhat = dlc_row_sum(sum_g_xhat, scratch) / float(kExtent);
    for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) {
      const float g = dlc_to_float(dy[base + c]) * dlc_to_float(scale[c]);
      const float xhat = (dlc_to_float(x[base + c]) - mean) * inv_std;
      dx[base + c] = dlc_from_float<T>(inv_std * (g - mean_g - xhat * mean_g_xhat));
    }
    if (dlc_row_lane() == 0) {
      mean_ws[row] = mean;
      inv_std_ws[row] = inv_std;
    }
  }
}
)";

// dscale[c] = sum over rows of dy * xhat, dbias[c] = sum of dy: blockDim (32, 8), x along the
// columns, y over this block's split of the rows (blockIdx.y).
constexpr const char* kBackwardParams = R"(
constexpr Index kSplits = ${SPLITS};
constexpr Index kRowsPerSplit = (kRows + kSplits - 1) / kSplits;

extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const Y* __restrict__ dy, const T* __restrict__ x, float* __restrict__ workspace,
    ${OUT_T}* __restrict__ dscale, ${OUT_T}* __restrict__ dbias) {
  __shared__ float partial_scale[8][33], partial_bias[8][33];
  const float* mean_ws = workspace;
  const float* inv_std_ws = workspace + kRows;
  const Index c = Index(blockIdx.x) * 32 + threadIdx.x;
  const Index begin = Index(blockIdx.y) * kRowsPerSplit;
  const Index end = begin + kRowsPerSplit < kRows ? begin + kRowsPerSplit : kRows;
  float s = 0.0f, b = 0.0f;
  if (c < kExtent)
    for (Index r = begin + threadIdx.y; r < end; r += 8) {
      const float g = dlc_to_float(dy[r * kExtent + c]);
      s += g * (dlc_to_float(x[r * kExtent + c]) - mean_ws[r]) * inv_std_ws[r];
      b += g;
    }
  partial_scale[threadIdx.y][threadIdx.x] = s;
  partial_bias[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < kExtent) {
    for (int k = 1; k < 8; ++k) {
      s += partial_scale[k][threadIdx.x];
      b += partial_bias[k][threadIdx.x];
    }
${STORE}  }
}
)";

constexpr const char* kStoreParams = R"(    dscale[c] = dlc_from_float<T>(s);
    dbias[c] = dlc_from_float<T>(b);
)";

constexpr const char* kStorePartial =
    R"(    // Partial sums of this split: dscale parts, then dbias parts, after the statistics.
    dscale[Index(blockIdx.y) * kExtent + c] = s;
    dbias[Index(blockIdx.y) * kExtent + c] = b;
)";

constexpr const char* kBackwardFinal = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const float* __restrict__ workspace, T* __restrict__ dscale, T* __restrict__ dbias) {
  const float* scale_parts = workspace + ${SCALE_PARTS};
  const float* bias_parts = workspace + ${BIAS_PARTS};
  for (Index c = Index(blockIdx.x) * 256 + threadIdx.x; c < kExtent; c += Index(gridDim.x) * 256) {
    float s = 0.0f, b = 0.0f;
    for (Index k = 0; k < kSplits; ++k) {
      s += scale_parts[k * kExtent + c];
      b += bias_parts[k * kExtent + c];
    }
    dscale[c] = dlc_from_float<T>(s);
    dbias[c] = dlc_from_float<T>(b);
  }
}
)";

DType y_dtype(const LayerNormSpec& spec) { return spec.y_dtype.value_or(spec.dtype); }

void check(const LayerNormSpec& spec) {
  require_storage_float(spec.dtype, "CUDA layer norm");
  require_storage_float(y_dtype(spec), "CUDA layer norm (y)");
  if (spec.rows < 1 || spec.cols < 1)
    throw Error(fmt::format("CUDA layer norm: empty view [{}, {}]", spec.rows, spec.cols));
  if (spec.channels < 0 || (spec.channels > 0 && spec.rows % spec.channels != 0))
    throw Error(fmt::format("CUDA instance norm: {} rows are no whole number of {} channels", spec.rows,
                            spec.channels));
}

// The start of the forward and backward sources: a comment line naming the kernel, the device
// prelude, the row helpers of `layout` and the per-row statistics.
std::string source_start(const LayerNormSpec& spec, const std::string& kind, const std::string& name,
                         const RowLayout& layout, const RowMapping& m) {
  const DType y = y_dtype(spec);
  return fmt::format("// dlc {} kernel {}: rows of [{}, {}] ({}{}), epsilon {}.\n", kind, name, spec.rows,
                     spec.cols, dtype_name(spec.dtype),
                     y == spec.dtype ? "" : ", y " + std::string(dtype_name(y)),
                     double_literal(spec.epsilon)) +
         device_prelude({{spec.dtype, y}, false, true}) + row_helpers(layout, m) +
         fill(kStatistics, {{"T", std::string(cuda_type(spec.dtype))},
                            {"Y", std::string(cuda_type(y))},
                            {"EPSILON", float_literal(spec.epsilon)}});
}

// The kernel name: the op, the types (x's, then y's where it differs) and the view (and the
// channels of an instance norm).
std::string layer_norm_kernel_name(const char* op, const LayerNormSpec& spec) {
  const DType y = y_dtype(spec);
  const std::string tag = dims_tag({spec.rows, spec.cols}) +
                          (spec.channels > 0 ? fmt::format("_c{}", spec.channels) : std::string());
  return kernel_name(op, spec.dtype, y == spec.dtype ? tag : fmt::format("{}_y{}", tag, dtype_name(y)));
}

}  // namespace

KernelSource emit_layer_norm_forward(const LayerNormSpec& spec) {
  check(spec);
  const RowLayout layout{spec.rows, spec.cols, 1};
  const RowMapping m = row_mapping(layout);
  const bool instance = spec.channels > 0;
  const std::string name = layer_norm_kernel_name(instance ? "instance_norm_fwd" : "layer_norm_fwd", spec);
  KernelSource ks = KernelSource::named("layer_norm_fwd", name);
  ks.source = source_start(spec, ks.kind, name, layout, m) +
              fill(kForward, {{"HAS_BIAS", spec.has_bias ? "true" : "false"},
                              {"PARAM_INDEX", instance ? fmt::format("row % {}", spec.channels) : "c"},
                              {"BLOCK", fmt::format("{}", m.block)},
                              {"NAME", name}});
  ks.entries.push_back({name, launch_1d(m.grid, m.block), {"x", "scale", "bias", "y", "mean", "inv_std"}});
  return ks;
}

KernelSource emit_layer_norm_backward(const LayerNormSpec& spec) {
  check(spec);
  const RowLayout layout{spec.rows, spec.cols, 1};
  const RowMapping m = row_mapping(layout);
  const std::string base = layer_norm_kernel_name("layer_norm_bwd", spec);
  const int64_t column_blocks = (spec.cols + 31) / 32;
  const int64_t splits = std::min<int64_t>(column_splits(spec.rows, column_blocks), 65535);
  const int64_t stats_floats = align256(2 * spec.rows * 4) / 4;

  KernelSource ks = KernelSource::named("layer_norm_bwd", base);
  ks.source = source_start(spec, ks.kind, base, layout, m) +
              fill(kBackwardDx, {{"BLOCK", fmt::format("{}", m.block)}, {"NAME", base + "_dx"}});
  ks.entries.push_back({base + "_dx", launch_1d(m.grid, m.block), {"dy", "x", "scale", "dx", "workspace"}});

  KernelEntry params{base + "_dparams", column_launch(column_blocks, splits), {}};
  if (splits == 1) {
    params.params = {"dy", "x", "workspace", "dscale", "dbias"};
    ks.source += fill(kBackwardParams,
                      {{"SPLITS", "1"}, {"NAME", params.name}, {"OUT_T", "T"}, {"STORE", kStoreParams}});
    ks.entries.push_back(params);
    ks.workspace_bytes = stats_floats * 4;
  } else {
    // The partial sums go to the workspace after the statistics: the dparams entry gets two
    // workspace offsets as its "dscale" and "dbias" pointers.
    const int64_t parts = splits * spec.cols;
    params.params = {"dy", "x", "workspace", "workspace+" + std::to_string(stats_floats * 4),
                     "workspace+" + std::to_string((stats_floats + parts) * 4)};
    ks.source += fill(kBackwardParams, {{"SPLITS", fmt::format("{}", splits)},
                                        {"NAME", params.name},
                                        {"OUT_T", "float"},
                                        {"STORE", kStorePartial}});
    const KernelEntry final_entry{
        base + "_dparams_final", launch_1d(grid_for(spec.cols, 256), 256), {"workspace", "dscale", "dbias"}};
    ks.source += fill(kBackwardFinal, {{"NAME", final_entry.name},
                                       {"SCALE_PARTS", fmt::format("{}", stats_floats)},
                                       {"BIAS_PARTS", fmt::format("{}", stats_floats + parts)}});
    ks.entries.push_back(params);
    ks.entries.push_back(final_entry);
    ks.workspace_bytes = align256((stats_floats + 2 * parts) * 4);
  }
  return ks;
}

}  // namespace dlc::codegen::cuda
