// Embedding gather and scatter-add backward kernels (embedding_emitter.h).
#include "codegen/cuda/embedding_emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

constexpr const char* kCommon = R"(
using T = ${T};
using Idx = ${IDX};
using Index = ${INDEX};
constexpr Index kVocab = ${VOCAB};
constexpr Index kDim = ${DIM};
constexpr Index kIndices = ${INDICES};
constexpr Index kOuter = ${OUTER};  // blocks of [vocab, dim] gathered alike (Gather on axis > 0)

// The table row of index `j`, or -1 when it is out of range.
__device__ __forceinline__ Index dlc_table_row(const Idx* __restrict__ indices, Index j) {
  long long r = indices[j];
  if (r < 0) r += kVocab;
  return r >= 0 && r < kVocab ? Index(r) : Index(-1);
}
)";

// Rows a multiple of 4 elements long, of a float type: quads of a row moved at once.
constexpr const char* kGatherQuads = R"(
  if (dlc_aligned4(weight) && dlc_aligned4(out)) {
    constexpr Index kBlock = kIndices * (kDim / 4);  // quads of one outer block
    for (Index q = tid; q < kOuter * kBlock; q += stride) {
      const Index o = kOuter == 1 ? 0 : q / kBlock, p = kOuter == 1 ? q : q % kBlock;
      const Index j = p / (kDim / 4), c = p % (kDim / 4) * 4;
      const Index r = dlc_table_row(indices, j);
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if (r >= 0) dlc_load4(weight + (o * kVocab + r) * kDim + c, v);
      dlc_store4(out + (o * kIndices + j) * kDim + c, v);
    }
    return;
  }
)";

constexpr const char* kGather = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ weight, const Idx* __restrict__ indices, T* __restrict__ out) {
  const Index tid = Index(blockIdx.x) * 256 + threadIdx.x;
  const Index stride = Index(gridDim.x) * 256;
${QUADS}
  for (Index q = tid; q < kOuter * kIndices * kDim; q += stride) {
    const Index o = kOuter == 1 ? 0 : q / (kIndices * kDim), p = kOuter == 1 ? q : q % (kIndices * kDim);
    const Index r = dlc_table_row(indices, p / kDim);
    out[q] = r >= 0 ? weight[(o * kVocab + r) * kDim + p % kDim] : ${ZERO};
  }
}
)";

constexpr const char* kZero = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    float* __restrict__ accum) {
  for (Index q = Index(blockIdx.x) * 256 + threadIdx.x; q < kOuter * kVocab * kDim; q += Index(gridDim.x) * 256)
    accum[q] = 0.0f;
}
)";

constexpr const char* kScatter = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ dy, const Idx* __restrict__ indices, float* __restrict__ accum) {
  for (Index q = Index(blockIdx.x) * 256 + threadIdx.x; q < kOuter * kIndices * kDim; q += Index(gridDim.x) * 256) {
    const Index o = kOuter == 1 ? 0 : q / (kIndices * kDim), p = kOuter == 1 ? q : q % (kIndices * kDim);
    const Index r = dlc_table_row(indices, p / kDim);
    if (r >= 0) atomicAdd(accum + (o * kVocab + r) * kDim + p % kDim, dlc_to_float(dy[q]));
  }
}
)";

constexpr const char* kCast = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const float* __restrict__ accum, T* __restrict__ dtable) {
  for (Index q = Index(blockIdx.x) * 256 + threadIdx.x; q < kOuter * kVocab * kDim; q += Index(gridDim.x) * 256)
    dtable[q] = dlc_from_float<T>(accum[q]);
}
)";

// The kernels' common part; the gather (`any_dtype`) also moves integer and bool tables.
std::string prepare(const EmbeddingSpec& spec, const std::string& kind, const std::string& name,
                    bool vector_io, bool any_dtype) {
  if (!any_dtype) require_storage_float(spec.dtype, "CUDA embedding");
  require_index_type(spec.index_dtype, "CUDA embedding indices");
  if (spec.vocab < 1 || spec.dim < 1 || spec.indices < 0 || spec.outer < 1)
    throw Error(fmt::format("CUDA embedding: bad table [{}, {}, {}] or {} indices", spec.outer, spec.vocab,
                            spec.dim, spec.indices));
  std::string s =
      fmt::format("// dlc {} kernel {}: table [{}, {}, {}] ({}), {} indices ({}).\n", kind, name, spec.outer,
                  spec.vocab, spec.dim, dtype_name(spec.dtype), spec.indices, dtype_name(spec.index_dtype));
  s += device_prelude({{spec.dtype}, vector_io, false});
  s += fill(kCommon,
            {{"T", std::string(cuda_type(spec.dtype))},
             {"IDX", std::string(cuda_type(spec.index_dtype))},
             {"INDEX", std::string(index_type(spec.outer * std::max(spec.vocab, spec.indices) * spec.dim))},
             {"OUTER", fmt::format("{}", spec.outer)},
             {"VOCAB", fmt::format("{}", spec.vocab)},
             {"DIM", fmt::format("{}", spec.dim)},
             {"INDICES", fmt::format("{}", spec.indices)}});
  return s;
}

KernelEntry entry(std::string name, std::vector<std::string> params, int64_t work) {
  return {std::move(name), launch_1d(grid_for(work, 256), 256), std::move(params)};
}

std::string detail(const EmbeddingSpec& spec) {
  const std::string outer = spec.outer == 1 ? "" : fmt::format("o{}_", spec.outer);
  return fmt::format("{}{}_{}", outer, dims_tag({spec.vocab, spec.dim, spec.indices}),
                     dtype_name(spec.index_dtype));
}

}  // namespace

EmbeddingSpec gather_spec(const Attrs& attrs, const TensorType& table, const TensorType& indices) {
  const AxisView v = axis_view(table.shape, attrs.i("axis", 0));
  EmbeddingSpec spec;
  spec.dtype = table.dtype;
  spec.index_dtype = indices.dtype;
  spec.indices = indices.numel();
  spec.outer = v.outer;
  spec.vocab = v.extent;
  spec.dim = v.inner;
  if (spec.vocab == 0) throw Error("the table is empty on the gathered axis");
  return spec;
}

KernelSource emit_embedding_gather(const EmbeddingSpec& spec) {
  const std::string name = kernel_name("embedding_gather", spec.dtype, detail(spec));
  const bool is_float = is_storage_float(spec.dtype);
  const bool vec = is_float && spec.dim % 4 == 0;
  KernelSource ks = KernelSource::named("embedding_gather", name);
  ks.source = prepare(spec, ks.kind, name, vec, true) +
              fill(kGather, {{"QUADS", vec ? kGatherQuads : ""},
                             {"ZERO", is_float ? "dlc_from_float<T>(0.0f)" : "T(0)"},
                             {"NAME", name}});
  ks.entries.push_back(
      entry(name, {"weight", "indices", "out"}, spec.outer * spec.indices * spec.dim / (vec ? 4 : 1)));
  return ks;
}

KernelSource emit_embedding_backward(const EmbeddingSpec& spec) {
  const std::string base = kernel_name("embedding_bwd", spec.dtype, detail(spec));
  const bool direct = spec.dtype == DType::F32;  // accumulate straight into dtable
  const std::string accum = direct ? "dtable" : "workspace";
  KernelSource ks = KernelSource::named("embedding_bwd", base);
  ks.source = prepare(spec, ks.kind, base, false, false) + fill(kZero, {{"NAME", base + "_zero"}}) +
              fill(kScatter, {{"NAME", base + "_scatter"}});
  const int64_t table = spec.outer * spec.vocab * spec.dim;
  ks.entries.push_back(entry(base + "_zero", {accum}, table));
  ks.entries.push_back(
      entry(base + "_scatter", {"dy", "indices", accum}, spec.outer * spec.indices * spec.dim));
  if (!direct) {
    ks.source += fill(kCast, {{"NAME", base + "_cast"}});
    ks.entries.push_back(entry(base + "_cast", {"workspace", "dtable"}, table));
    ks.workspace_bytes = align256(table * 4);
  }
  return ks;
}

}  // namespace dlc::codegen::cuda
