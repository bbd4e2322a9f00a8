// Row and column reduction kernels (reduce_emitter.h).
#include "codegen/cuda/reduce_emitter.h"

#include <fmt/format.h>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/elementwise_emitter.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/row_mapping.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

// Every op is a sum, a max or a product of map(x), then finish(acc): ReduceMin is -max(-x) (exact,
// and NaN still propagates), ReduceL2 sqrt(sum(x * x)), ….
struct OpText {
  const char* name;      // in kernel names
  const char* identity;  // initial accumulator
  const char* combine;   // of `acc` and `v`
  const char* row_reduce;
  const char* block_reduce;
  const char* map = nullptr;   // of an element `v` before combining; null: v itself
  const char* finish = "acc";  // of the result `acc`; "${EXTENT}" is the reduced extent
};

constexpr OpText kSum = {"sum", "0.0f", "acc + v", "dlc_row_sum", "dlc_block_sum"};
constexpr OpText kMax = {"max", "-dlc_inf()", "dlc_nan_max(acc, v)", "dlc_row_max", "dlc_block_max"};
constexpr OpText kProd = {"prod", "1.0f", "acc * v", "dlc_row_prod", "dlc_block_prod"};

OpText op_text(ReduceOp op) {
  auto with = [](OpText t, const char* name, const char* map, const char* finish) {
    t.name = name;
    t.map = map;
    t.finish = finish;
    return t;
  };
  switch (op) {
    case ReduceOp::Sum:
      return kSum;
    case ReduceOp::Mean:
      return with(kSum, "mean", nullptr, "acc / ${EXTENT}");
    case ReduceOp::Max:
      return kMax;  // NaN propagates
    case ReduceOp::Min:
      return with(kMax, "min", "-v", "-acc");
    case ReduceOp::L1:
      return with(kSum, "l1", "fabsf(v)", "acc");
    case ReduceOp::L2:
      return with(kSum, "l2", "v * v", "sqrtf(acc)");
    case ReduceOp::SumSquare:
      return with(kSum, "sum_square", "v * v", "acc");
    case ReduceOp::LogSum:
      return with(kSum, "log_sum", nullptr, "logf(acc)");
    case ReduceOp::Prod:
      return kProd;
  }
  return {};
}

// `value` (an element as float) mapped by the op.
std::string mapped(const OpText& t, const std::string& value) {
  return t.map ? "dlc_map(" + value + ")" : value;
}

// The shared reduction helpers: map, combine and finish.
std::string op_helpers(const ReduceSpec& spec) {
  const OpText t = op_text(spec.op);
  std::string s = fill(
      R"(
__device__ __forceinline__ float dlc_combine(float acc, float v) { return ${COMBINE}; }
__device__ __forceinline__ float dlc_finish(float acc) { return ${FINISH}; }
)",
      {{"COMBINE", t.combine},
       {"FINISH", std::string_view(t.finish).find("${EXTENT}") == std::string_view::npos
                      ? std::string(t.finish)
                      : fill(t.finish, {{"EXTENT", float_literal(double(spec.extent))}})}});
  if (t.map)
    s += fill("__device__ __forceinline__ float dlc_map(float v) { return ${MAP}; }\n", {{"MAP", t.map}});
  return s;
}

// ReduceProd's warp and block products (the prelude has sums and maxima only), and, for the rows
// kernel, dlc_row_prod on its mapping's warp or block.
std::string product_helpers(const ReduceSpec& spec, const RowMapping* rows) {
  if (spec.op != ReduceOp::Prod) return "";
  std::string s = warp_and_block_reduction("dlc_warp_prod", "dlc_block_prod", "a * b", "1.0f");
  if (rows)
    s += rows->warp_per_row
             ? "__device__ __forceinline__ float dlc_row_prod(float v, float*) { return dlc_warp_prod(v); }\n"
             : "__device__ __forceinline__ float dlc_row_prod(float v, float* scratch) { return "
               "dlc_block_prod(v, scratch); }\n";
  return s;
}

constexpr const char* kRowKernel = R"(
using T = ${T};
${X_SOURCE}
extern "C" __global__ void __launch_bounds__(${BLOCK}) ${NAME}(
    ${X_PARAMS}, T* __restrict__ y) {
  __shared__ float scratch[32];
  const bool vec = ${VEC};
  for (Index row = dlc_row_first(); row < kRows; row += dlc_row_step()) {
${ROW_BASE}    float acc = ${IDENTITY};
    if (vec) {
${VEC_LOOP}    } else {
      for (Index c = dlc_row_lane(); c < kExtent; c += kRowThreads) acc = dlc_combine(acc, ${ROW_LOAD});
    }
    acc = ${ROW_REDUCE}(acc, scratch);
    if (dlc_row_lane() == 0) y[row] = dlc_from_float<T>(dlc_finish(acc));
  }
}
)";

// Split rows (few rows, long ones: a whole-tensor sum would otherwise be one block): block
// (split, row) reduces its share of the row into workspace[split, row]; the column kernels' final
// pass (kColumnFinal, inner 1) combines the splits.
constexpr const char* kRowSplitCommon = R"(
using T = ${T};
using Index = ${INDEX};
constexpr Index kOuter = ${ROWS};  // rows
constexpr Index kExtent = ${EXTENT};
constexpr Index kInner = 1;
constexpr Index kSplits = ${SPLITS};
constexpr Index kPerSplit = (kExtent + kSplits - 1) / kSplits;
)";

constexpr const char* kRowSplitKernel = R"(
${X_SOURCE}
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    ${X_PARAMS}, float* __restrict__ workspace) {
  __shared__ float scratch[32];
  const Index row = blockIdx.y;
  const Index begin = Index(blockIdx.x) * kPerSplit;
  const Index end = begin + kPerSplit < kExtent ? begin + kPerSplit : kExtent;
  float acc = ${IDENTITY};
  for (Index c = begin + threadIdx.x; c < end; c += 256) acc = dlc_combine(acc, ${ROW_LOAD});
  acc = ${BLOCK_REDUCE}(acc, scratch);
  if (threadIdx.x == 0) workspace[Index(blockIdx.x) * kOuter + row] = acc;
}
)";

constexpr const char* kRowVectorLoop =
    R"(      for (Index c = Index(dlc_row_lane()) * 4; c < kExtent; c += kRowThreads * 4) {
        float v[4];
        dlc_load4(x + xr + c, v);
${MAP4}        acc = dlc_combine(dlc_combine(acc, v[0]), dlc_combine(v[1], dlc_combine(v[2], v[3])));
      }
)";

// The gathered view's element c of row r: r walks the kept dims and c the reduced ones, each
// innermost first (the outermost of each kind needs no modulo).
std::string gather_index_source(const ReduceSpec& spec) {
  std::string body;
  const size_t n = spec.gather_dims.size();
  int64_t stride = 1;
  for (size_t i = n; i-- > 0;) {
    const bool reduced = spec.gather_reduced[i];
    const char* var = reduced ? "c" : "r";
    bool outermost = true;
    for (size_t j = 0; j < i; ++j)
      if (spec.gather_reduced[j] == reduced) outermost = false;
    const int64_t d = spec.gather_dims[i];
    body += outermost ? fmt::format("  offset += {} * {};\n", var, stride)
                      : fmt::format("  offset += {0} % {1} * {2};\n  {0} /= {1};\n", var, d, stride);
    stride *= d;
  }
  return "__device__ __forceinline__ Index dlc_gather_index(Index r, Index c) {\n  Index offset = 0;\n" +
         body + "  return offset;\n}\n";
}

// Column reduction: blockDim (32, 8); x runs along the contiguous inner axis, y over the reduced
// axis; blockIdx.y walks the outer axis and blockIdx.z the splits of the reduced axis.
constexpr const char* kColumnCommon = R"(
using T = ${T};
using Index = ${INDEX};
constexpr Index kOuter = ${OUTER};
constexpr Index kExtent = ${EXTENT};
constexpr Index kInner = ${INNER};
constexpr Index kSplits = ${SPLITS};
constexpr Index kPerSplit = (kExtent + kSplits - 1) / kSplits;

${X_SOURCE}
// The reduction of x[o, e, i] over this block's split of e, in every thread with threadIdx.y == 0.
__device__ __forceinline__ float dlc_column_reduce(${X_PARAMS}, Index o, Index i, float (&partial)[8][33]) {
  float acc = ${IDENTITY};
  if (i < kInner) {
    const Index begin = Index(blockIdx.z) * kPerSplit;
    const Index end = begin + kPerSplit < kExtent ? begin + kPerSplit : kExtent;
    for (Index e = begin + threadIdx.y; e < end; e += 8) acc = dlc_combine(acc, ${COLUMN_LOAD});
  }
  partial[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0)
    for (int k = 1; k < 8; ++k) acc = dlc_combine(acc, partial[k][threadIdx.x]);
  __syncthreads();
  return acc;
}
)";

constexpr const char* kColumnKernel = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    ${X_PARAMS}, ${OUT_TYPE}* __restrict__ y) {
  __shared__ float partial[8][33];
  const Index i = Index(blockIdx.x) * 32 + threadIdx.x;
  for (Index o = blockIdx.y; o < kOuter; o += gridDim.y) {
    const float acc = dlc_column_reduce(${X_ARGS}, o, i, partial);
    if (threadIdx.y == 0 && i < kInner) y[${OUT_INDEX}] = ${OUT_VALUE};
  }
}
)";

// Combines the splits' partial results (f32, [splits, outer, inner]) into y.
constexpr const char* kColumnFinal = R"(
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const float* __restrict__ partial, T* __restrict__ y) {
  const Index n = kOuter * kInner;
  for (Index j = Index(blockIdx.x) * 256 + threadIdx.x; j < n; j += Index(gridDim.x) * 256) {
    float acc = ${IDENTITY};
    for (Index s = 0; s < kSplits; ++s) acc = dlc_combine(acc, partial[s * n + j]);
    y[j] = dlc_from_float<T>(dlc_finish(acc));
  }
}
)";

// How the kernels read x: a tensor, or a program's result computed where it is read.
struct XRead {
  std::string source;  // device code, after Index
  std::string params, args;
  std::vector<std::string> names;  // entry parameters
  std::vector<DType> types;
  std::string kind_prefix;  // of kernel kinds and names
  std::string name_suffix;  // of kernel names: the program's hash
  std::string load(const std::string& index) const {
    return program ? fmt::format("dlc_value({}, {})", args, index)
                   : fmt::format("dlc_to_float(x[{}])", index);
  }
  bool program = false;
};

XRead x_read(const ReduceSpec& spec) {
  XRead r;
  if (!spec.prologue) {
    r.params = "const T* __restrict__ x";
    r.args = "x";
    r.names = {"x"};
    r.types = {spec.dtype};
    return r;
  }
  if (spec.dtype != DType::F32 || spec.prologue->outputs.empty() ||
      spec.prologue->outputs[0].dtype != DType::F32 ||
      num_elements(spec.prologue->dims) != spec.outer * spec.extent * spec.inner)
    throw Error(
        "CUDA fused reduction: expects a program with one f32 result of [outer, extent, inner] elements");
  const ProgramSource ps = program_source(*spec.prologue);
  r.program = true;
  r.source = ps.code;
  r.params = fmt::format("{}", fmt::join(ps.params, ", "));
  r.args = fmt::format("{}", fmt::join(ps.args, ", "));
  r.names = ps.names;
  r.types = ps.types;
  r.kind_prefix = "fused_";
  r.name_suffix = "_" + ps.hash;
  return r;
}

std::vector<std::string> with(std::vector<std::string> names, const std::string& last) {
  names.push_back(last);
  return names;
}

// Rows split `splits` ways: a partial kernel (kRowSplitKernel) and the final combine
// (kColumnFinal); `ks` has the name and the header comment.
KernelSource emit_split_rows(const ReduceSpec& spec, const OpText& t, const XRead& x, int64_t splits,
                             KernelSource ks) {
  const bool gather = !spec.gather_dims.empty();
  const std::string base = ks.name.substr(0, ks.name.size() - 3);  // without ".cu"
  ks.source += device_prelude({x.types, /*vector_io=*/false, /*reductions=*/true});
  ks.source += fill(kRowSplitCommon, {{"T", std::string(cuda_type(spec.dtype))},
                                      {"INDEX", std::string(index_type(spec.outer * spec.extent + splits))},
                                      {"ROWS", fmt::format("{}", spec.outer)},
                                      {"EXTENT", fmt::format("{}", spec.extent)},
                                      {"SPLITS", fmt::format("{}", splits)}});
  if (gather) ks.source += gather_index_source(spec);
  ks.source += op_helpers(spec);
  ks.source += product_helpers(spec, nullptr);
  KernelEntry partial{base + "_partial", {}, with(x.names, "workspace")};
  partial.launch = launch_1d(splits, 256);
  partial.launch.grid[1] = spec.outer;
  ks.source +=
      fill(kRowSplitKernel,
           {{"X_SOURCE", x.source},
            {"NAME", partial.name},
            {"X_PARAMS", x.params},
            {"IDENTITY", t.identity},
            {"ROW_LOAD", mapped(t, x.load(gather ? "dlc_gather_index(row, c)" : "row * kExtent + c"))},
            {"BLOCK_REDUCE", t.block_reduce}});
  const KernelEntry final_entry{
      base + "_final", launch_1d(grid_for(spec.outer, 256), 256), {"workspace", "y"}};
  ks.source += fill(kColumnFinal, {{"NAME", final_entry.name}, {"IDENTITY", t.identity}});
  ks.entries = {partial, final_entry};
  ks.workspace_bytes = align256(splits * spec.outer * int64_t(sizeof(float)));
  return ks;
}

// Rows of [outer, extent], or of the gathered view.
KernelSource emit_rows(const ReduceSpec& spec, const OpText& t) {
  const RowLayout layout{spec.outer, spec.extent, 1};
  const RowMapping m = row_mapping(layout);
  const XRead x = x_read(spec);
  const bool gather = !spec.gather_dims.empty();
  std::string detail = dims_tag(gather ? spec.gather_dims : Shape{spec.outer, spec.extent});
  if (gather) {
    detail += "_r";
    for (bool r : spec.gather_reduced) detail += r ? '1' : '0';
  }
  const std::string kind = fmt::format("{}reduce_{}", x.kind_prefix, gather ? "gather" : "rows");
  const std::string name =
      kernel_name(fmt::format("{}_{}{}", kind, t.name, x.name_suffix), spec.dtype, detail);
  KernelSource ks = KernelSource::named(kind, name);
  const int64_t splits = row_splits(spec.outer, spec.extent);
  ks.source = gather ? fmt::format("// dlc {} kernel: {} of [{}] over the dims marked 1 in {} ({})", t.name,
                                   name, fmt::join(spec.gather_dims, ", "), detail, dtype_name(spec.dtype))
                     : fmt::format("// dlc {} kernel: {} over rows of [{}, {}] ({})", t.name, name,
                                   spec.outer, spec.extent, dtype_name(spec.dtype));
  ks.source += splits > 1 ? fmt::format(", {} split(s).\n", splits) : std::string(".\n");
  if (splits > 1) return emit_split_rows(spec, t, x, splits, std::move(ks));
  // The 4-wide path reads a tensor whose rows are a multiple of 4 long, from an aligned start.
  const bool vec = !x.program && !gather && spec.extent % 4 == 0;
  ks.source += device_prelude({x.types, /*vector_io=*/vec, /*reductions=*/true});
  ks.source += row_helpers(layout, m);
  if (gather) ks.source += gather_index_source(spec);
  ks.source += op_helpers(spec);
  ks.source += product_helpers(spec, &m);
  ks.source += fill(
      kRowKernel,
      {{"T", std::string(cuda_type(spec.dtype))},
       {"X_SOURCE", x.source},
       {"X_PARAMS", x.params},
       {"VEC", vec ? "dlc_aligned4(x)" : "false"},
       {"VEC_LOOP",
        vec ? fill(kRowVectorLoop,
                   {{"MAP4", t.map ? "        for (int k = 0; k < 4; ++k) v[k] = dlc_map(v[k]);\n" : ""}})
            : ""},
       {"ROW_BASE", gather ? "" : "    const Index xr = dlc_row_base(row);\n"},
       {"ROW_LOAD", mapped(t, x.load(gather ? "dlc_gather_index(row, c)" : "xr + c"))},
       {"BLOCK", fmt::format("{}", m.block)},
       {"NAME", name},
       {"IDENTITY", t.identity},
       {"ROW_REDUCE", t.row_reduce}});
  ks.entries.push_back({name, launch_1d(m.grid, m.block), with(x.names, "y")});
  return ks;
}

KernelSource emit_columns(const ReduceSpec& spec, const OpText& t) {
  const XRead x = x_read(spec);
  const int64_t column_blocks = (spec.inner + 31) / 32;
  const int64_t outer_blocks = std::min<int64_t>(spec.outer, 65535);
  const int64_t splits = column_splits(spec.extent, column_blocks * outer_blocks);
  const std::string base =
      kernel_name(fmt::format("{}reduce_cols_{}{}", x.kind_prefix, t.name, x.name_suffix), spec.dtype,
                  dims_tag({spec.outer, spec.extent, spec.inner}));
  KernelSource ks = KernelSource::named(x.kind_prefix + "reduce_cols", base);
  ks.source = fmt::format("// dlc {} kernel: {} over the middle axis of [{}, {}, {}] ({}), {} split(s).\n",
                          t.name, base, spec.outer, spec.extent, spec.inner, dtype_name(spec.dtype), splits);
  ks.source += device_prelude({x.types, false, false});
  ks.source += op_helpers(spec);
  ks.source += fill(kColumnCommon, {{"T", std::string(cuda_type(spec.dtype))},
                                    {"INDEX", std::string(index_type(spec.outer * spec.extent * spec.inner *
                                                                     std::max<int64_t>(splits, 1)))},
                                    {"OUTER", fmt::format("{}", spec.outer)},
                                    {"EXTENT", fmt::format("{}", spec.extent)},
                                    {"INNER", fmt::format("{}", spec.inner)},
                                    {"SPLITS", fmt::format("{}", splits)},
                                    {"IDENTITY", t.identity},
                                    {"X_SOURCE", x.source},
                                    {"X_PARAMS", x.params},
                                    {"COLUMN_LOAD", mapped(t, x.load("(o * kExtent + e) * kInner + i"))}});
  KernelEntry first;
  first.launch = column_launch(column_blocks, outer_blocks, splits);
  if (splits == 1) {
    first.name = base;
    first.params = with(x.names, "y");
    ks.source += fill(kColumnKernel, {{"NAME", base},
                                      {"X_PARAMS", x.params},
                                      {"X_ARGS", x.args},
                                      {"OUT_TYPE", "T"},
                                      {"OUT_INDEX", "o * kInner + i"},
                                      {"OUT_VALUE", "dlc_from_float<T>(dlc_finish(acc))"}});
    ks.entries.push_back(first);
  } else {
    first.name = base + "_partial";
    first.params = with(x.names, "workspace");
    ks.source += fill(kColumnKernel, {{"NAME", first.name},
                                      {"X_PARAMS", x.params},
                                      {"X_ARGS", x.args},
                                      {"OUT_TYPE", "float"},
                                      {"OUT_INDEX", "(Index(blockIdx.z) * kOuter + o) * kInner + i"},
                                      {"OUT_VALUE", "acc"}});
    const KernelEntry final_entry{
        base + "_final", launch_1d(grid_for(spec.outer * spec.inner, 256), 256), {"workspace", "y"}};
    ks.source += fill(kColumnFinal, {{"NAME", final_entry.name}, {"IDENTITY", t.identity}});
    ks.entries.push_back(first);
    ks.entries.push_back(final_entry);
    ks.workspace_bytes = align256(splits * spec.outer * spec.inner * int64_t(sizeof(float)));
  }
  return ks;
}

}  // namespace

ReduceSpec reduce_spec(ReduceOp op, DType dtype, const Shape& dims, std::vector<int64_t> axes) {
  ReduceSpec spec;
  spec.op = op;
  spec.dtype = dtype;
  const int64_t rank = int64_t(dims.size());
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  std::vector<bool> reduced(dims.size(), false);
  for (int64_t a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) throw Error(fmt::format("CUDA reduction: axis {} of a rank-{} tensor", a, rank));
    reduced[size_t(a)] = true;
  }
  // Merge: size-1 dims go, adjacent dims of one kind become one.
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!spec.gather_reduced.empty() && spec.gather_reduced.back() == reduced[d]) {
      spec.gather_dims.back() *= dims[d];
    } else {
      spec.gather_dims.push_back(dims[d]);
      spec.gather_reduced.push_back(reduced[d]);
    }
  }
  int64_t runs = 0, kept = 1, extent = 1;
  for (size_t i = 0; i < spec.gather_dims.size(); ++i) {
    (spec.gather_reduced[i] ? extent : kept) *= spec.gather_dims[i];
    runs += spec.gather_reduced[i] ? 1 : 0;
  }
  if (runs >= 2) {  // gathered
    spec.outer = kept;
    spec.extent = extent;
    return spec;
  }
  // [outer, extent, inner] around the one reduced run (none: [numel, 1, 1]).
  spec.outer = 1;
  spec.extent = extent;
  spec.inner = 1;
  bool before = true;
  for (size_t i = 0; i < spec.gather_dims.size(); ++i) {
    if (spec.gather_reduced[i])
      before = false;
    else
      (before ? spec.outer : spec.inner) *= spec.gather_dims[i];
  }
  spec.gather_dims.clear();
  spec.gather_reduced.clear();
  return spec;
}

KernelSource emit_reduce(const ReduceSpec& spec) {
  require_storage_float(spec.dtype, "CUDA reduction");
  if (spec.outer < 1 || spec.extent < 1 || spec.inner < 1)
    throw Error(fmt::format("CUDA reduction: empty view [{}, {}, {}]", spec.outer, spec.extent, spec.inner));
  if (spec.gather_dims.size() != spec.gather_reduced.size() ||
      (!spec.gather_dims.empty() &&
       (spec.inner != 1 || num_elements(spec.gather_dims) != spec.outer * spec.extent)))
    throw Error("CUDA reduction: the gathered view does not match [outer, extent]");
  const OpText t = op_text(spec.op);
  return spec.inner == 1 ? emit_rows(spec, t) : emit_columns(spec, t);
}

}  // namespace dlc::codegen::cuda
