// Slice, Pad, Concat and Transpose kernels: each output element copies an affinely mapped input
// element (copy_emitter.h).
#include "codegen/cuda/copy_emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"
#include "dlc/hash.h"

namespace dlc::codegen::cuda {

namespace {

constexpr const char* kKernel = R"(
using Index = ${INDEX};
using T = ${T};
constexpr Index kNumel = ${NUMEL};

// Output element i of [${DIMS}]: its coordinates o<d>, then the first source whose coordinates
// c<d> are in range.
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    ${PARAMS}) {
  const Index stride = Index(gridDim.x) * 256;
  for (Index i = Index(blockIdx.x) * 256 + Index(threadIdx.x); i < kNumel; i += stride) {
${COORDS}${SOURCES}${FALLBACK}  }
}
)";

// The fill value as a T, for the storage type `t`.
std::string fill_expr(DType t, double v) {
  if (is_storage_float(t)) return fmt::format("dlc_from_float<T>({})", float_literal(v));
  if (t == DType::Bool) return v != 0 ? "T(1)" : "T(0)";
  return fmt::format("T({}LL)", int64_t(v));
}

// The output axis that input axis d of `src` follows.
size_t out_axis(const CopySource& src, size_t d) {
  return src.out_axis.empty() ? d : size_t(src.out_axis[d]);
}

// The coordinate on input axis d of its output coordinate, remapped into range by edge/reflect.
std::string coordinate(const CopySpec& spec, const CopySource& src, size_t d) {
  const int64_t start = src.start[d], step = src.step[d], n = src.dims[d];
  const size_t o = out_axis(src, d);
  std::string c = step == 1 ? fmt::format("o{}", o) : fmt::format("{} * o{}", step, o);
  if (start != 0) c = fmt::format("{} {} {}", c, start < 0 ? '-' : '+', start < 0 ? -start : start);
  if (spec.mode == "edge") return fmt::format("dlc_clamp({}, {})", c, n - 1);
  if (spec.mode == "reflect") return n == 1 ? "0" : fmt::format("dlc_reflect({}, {}, {})", c, n, 2 * (n - 1));
  return c;
}

// The range checks of c = start + step · o over an axis of `extent` elements: "c >= 0" and
// "c < n" where some o breaks them.
std::vector<std::string> range_checks(const std::string& c, int64_t start, int64_t step, int64_t extent,
                                      int64_t n) {
  if (extent == 0) return {};
  const int64_t last = start + step * (extent - 1);
  std::vector<std::string> checks;
  if (std::min(start, last) < 0) checks.push_back(fmt::format("{} >= 0", c));
  if (std::max(start, last) >= n) checks.push_back(fmt::format("{} < {}", c, n));
  return checks;
}

void check(const CopySpec& spec) {
  if (spec.mode != "constant" && spec.mode != "edge" && spec.mode != "reflect")
    throw Error(fmt::format("CUDA copy: unknown mode '{}'", spec.mode));
  if (spec.sources.empty()) throw Error("CUDA copy: no source");
  for (const CopySource& s : spec.sources) {
    if (s.dims.size() != spec.out.size() || s.start.size() != spec.out.size() ||
        s.step.size() != spec.out.size())
      throw Error(fmt::format("CUDA copy: a source {} does not have the output's rank ({})",
                              shape_str(s.dims), spec.out.size()));
    if (spec.mode != "constant" && (spec.sources.size() != 1 || num_elements(s.dims) == 0))
      throw Error(fmt::format("CUDA copy: {} mode needs one non-empty source", spec.mode));
    std::vector<int64_t> axes = s.out_axis;
    std::sort(axes.begin(), axes.end());
    for (size_t d = 0; d < axes.size(); ++d)
      if (axes.size() != spec.out.size() || axes[d] != int64_t(d))
        throw Error(fmt::format("CUDA copy: out_axis [{}] is no permutation of the output's {} axes",
                                fmt::join(s.out_axis, ","), spec.out.size()));
  }
}

}  // namespace

KernelSource emit_copy(const CopySpec& spec) {
  check(spec);
  const size_t rank = spec.out.size();
  const std::string type(cuda_type(spec.dtype));  // throws for f64, i8
  const int64_t numel = num_elements(spec.out);
  int64_t largest = numel;
  for (const CopySource& s : spec.sources) largest = std::max(largest, num_elements(s.dims));

  std::string coords = rank ? "    Index rest = i;\n" : "";
  for (size_t d = rank; d-- > 0;) {
    if (d == 0) {
      coords += "    const Index o0 = rest;\n";
    } else {
      coords += fmt::format("    const Index o{} = rest % {};\n", d, spec.out[d]);
      coords += fmt::format("    rest /= {};\n", spec.out[d]);
    }
  }
  std::string sources, description;
  std::vector<std::string> params;
  for (size_t k = 0; k < spec.sources.size(); ++k) {
    const CopySource& s = spec.sources[k];
    params.push_back(fmt::format("const T* __restrict__ in{}", k));
    description +=
        fmt::format("{}:{}:{}:{};", shape_str(s.dims), fmt::join(s.start, ","), fmt::join(s.step, ","), k);
    if (!s.out_axis.empty()) description += fmt::format("axes {};", fmt::join(s.out_axis, ","));
    std::vector<std::string> checks, terms;
    std::string body = fmt::format("    {{  // source {}: [{}]\n", k, fmt::join(s.dims, ", "));
    int64_t pitch = 1;
    for (size_t d = rank; d-- > 0;) {
      const size_t o = out_axis(s, d);
      const bool identity = s.start[d] == 0 && s.step[d] == 1 && s.dims[d] == spec.out[o];
      const std::string c = identity ? fmt::format("o{}", o) : fmt::format("c{}", d);
      if (!identity) body += fmt::format("      const Index c{} = {};\n", d, coordinate(spec, s, d));
      if (spec.mode == "constant") {
        const std::vector<std::string> more = range_checks(c, s.start[d], s.step[d], spec.out[o], s.dims[d]);
        checks.insert(checks.begin(), more.begin(), more.end());
      }
      terms.insert(terms.begin(), pitch == 1 ? c : fmt::format("{} * {}", c, pitch));
      pitch *= s.dims[d];
    }
    const std::string offset = terms.empty() ? "0" : fmt::format("{}", fmt::join(terms, " + "));
    if (checks.empty()) {
      body += fmt::format("      out0[i] = in{}[{}];\n      continue;\n    }}\n", k, offset);
      sources += body;
      break;  // always in range: later sources are never read
    }
    body +=
        fmt::format("      if ({}) {{\n        out0[i] = in{}[{}];\n        continue;\n      }}\n    }}\n",
                    fmt::join(checks, " && "), k, offset);
    sources += body;
  }
  const bool all_covered = sources.find("if (") == std::string::npos;
  const std::string fallback =
      all_covered ? "" : fmt::format("    out0[i] = {};\n", fill_expr(spec.dtype, spec.fill));
  params.push_back("T* __restrict__ out0");

  description += fmt::format("{}:{}:{}", shape_str(spec.out), spec.mode, double_literal(spec.fill));
  const std::string name = kernel_name("copy", spec.dtype, hex64(fnv1a64(description)).substr(0, 12));
  std::string src = fmt::format("// dlc copy kernel {}: [{}] from {} source(s), {} mode.\n", name,
                                fmt::join(spec.out, ", "), spec.sources.size(), spec.mode);
  src += device_prelude({{spec.dtype}, false, false});
  if (spec.mode == "edge")
    src +=
        "__device__ __forceinline__ long long dlc_clamp(long long c, long long hi) { return c < 0 ? 0 : (c > "
        "hi "
        "? hi : c); }\n";
  if (spec.mode == "reflect")
    src +=
        "// Reflection without the edge: period 2 (n - 1).\n"
        "__device__ __forceinline__ long long dlc_reflect(long long c, long long n, long long period) {\n"
        "  c = ((c % period) + period) % period;\n"
        "  return c >= n ? period - c : c;\n"
        "}\n";
  src += fill(kKernel, {{"INDEX", std::string(index_type(largest))},
                        {"T", type},
                        {"NUMEL", fmt::format("{}", numel)},
                        {"DIMS", fmt::format("{}", fmt::join(spec.out, ", "))},
                        {"NAME", name},
                        {"PARAMS", fmt::format("{}", fmt::join(params, ", "))},
                        {"COORDS", coords},
                        {"SOURCES", sources},
                        {"FALLBACK", fallback}});

  KernelSource ks = KernelSource::named("copy", name, std::move(src));
  std::vector<std::string> names;
  for (size_t k = 0; k < spec.sources.size(); ++k) names.push_back(fmt::format("in{}", k));
  names.push_back("out0");
  ks.entries.push_back({name, launch_1d(grid_for(numel, 256), 256), std::move(names)});
  return ks;
}

}  // namespace dlc::codegen::cuda
