// Slice, Pad, Concat, Transpose, Tile, SliceGrad, Split and Trilu kernels: each output element copies an
// affinely mapped input element (copy_emitter.h).
#include "codegen/cuda/copy_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"
#include "dlc/hash.h"

namespace dlc::codegen::cuda {

namespace {

// One copy kernel; its types are local, so that several can share a source (emit_copies).
constexpr const char* kKernel = R"(
// Output element i of [${DIMS}]: its coordinates o<d>, then the first source whose coordinates
// c<d> are in range.
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    ${PARAMS}) {
  using Index = ${INDEX};
  using T = ${T};
  constexpr Index kNumel = ${NUMEL};
  const Index stride = Index(gridDim.x) * 256;
  for (Index i = Index(blockIdx.x) * 256 + Index(threadIdx.x); i < kNumel; i += stride) {
${COORDS}${SOURCES}${FALLBACK}  }
}
)";

// The output axis that input axis d of `src` follows.
size_t out_axis(const CopySource& src, size_t d) {
  return src.out_axis.empty() ? d : size_t(src.out_axis[d]);
}

int64_t divisor(const CopySource& src, size_t d) { return src.divisor.empty() ? 1 : src.divisor[d]; }

// start + step · o on input axis d, before the divisor.
std::string numerator(const CopySource& src, size_t d) {
  const int64_t start = src.start[d], step = src.step[d];
  const size_t o = out_axis(src, d);
  std::string c = step == 1 ? fmt::format("o{}", o) : fmt::format("{} * o{}", step, o);
  if (start != 0) c = fmt::format("{} {} {}", c, start < 0 ? '-' : '+', start < 0 ? -start : start);
  return c;
}

// The coordinate on input axis d of its output coordinate, remapped into range by edge, reflect
// or wrap.
std::string coordinate(const CopySpec& spec, const CopySource& src, size_t d) {
  const int64_t n = src.dims[d];
  const std::string c = numerator(src, d);
  if (const int64_t k = divisor(src, d); k != 1) return fmt::format("({}) / {}", c, k);
  if (spec.mode == "edge") return fmt::format("dlc_clamp({}, {})", c, n - 1);
  if (spec.mode == "reflect") return n == 1 ? "0" : fmt::format("dlc_reflect({}, {}, {})", c, n, 2 * (n - 1));
  if (spec.mode == "wrap") {
    const bool never_negative = src.start[d] >= 0 && src.step[d] >= 0;
    return n == 1           ? "0"
           : never_negative ? fmt::format("({}) % {}", c, n)
                            : fmt::format("dlc_wrap({}, {})", c, n);
  }
  return c;
}

// The checks that input axis d of `src` reads in range for the output coordinates of an axis of
// `extent` elements: over the numerator v = start + step · o, "v >= 0", "v < n · divisor" and
// "v % divisor == 0" where some o breaks them.
std::vector<std::string> range_checks(const CopySource& src, size_t d, int64_t extent) {
  if (extent == 0) return {};
  const int64_t start = src.start[d], step = src.step[d], k = divisor(src, d);
  const int64_t last = start + step * (extent - 1);
  const std::string v = k == 1 ? fmt::format("c{}", d) : fmt::format("({})", numerator(src, d));
  std::vector<std::string> checks;
  if (std::min(start, last) < 0) checks.push_back(fmt::format("{} >= 0", v));
  if (std::max(start, last) >= src.dims[d] * k) checks.push_back(fmt::format("{} < {}", v, src.dims[d] * k));
  if (k != 1 && (start % k != 0 || (extent > 1 && step % k != 0)))
    checks.push_back(fmt::format("{} % {} == 0", v, k));
  return checks;
}

void check(const CopySpec& spec) {
  if (spec.mode != "constant" && spec.mode != "edge" && spec.mode != "reflect" && spec.mode != "wrap")
    throw Error(fmt::format("CUDA copy: unknown mode '{}'", spec.mode));
  if (spec.sources.empty()) throw Error("CUDA copy: no source");
  if (spec.band != 0 && (spec.out.size() < 2 || spec.mode != "constant" || std::abs(spec.band) != 1))
    throw Error(fmt::format("CUDA copy: band {} needs rank 2 or more and constant mode", spec.band));
  for (const CopySource& s : spec.sources) {
    if (s.dims.size() != spec.out.size() || s.start.size() != spec.out.size() ||
        s.step.size() != spec.out.size() || (!s.divisor.empty() && s.divisor.size() != spec.out.size()))
      throw Error(fmt::format("CUDA copy: a source {} does not have the output's rank ({})",
                              shape_str(s.dims), spec.out.size()));
    const bool divided = std::any_of(s.divisor.begin(), s.divisor.end(), [](int64_t k) { return k != 1; });
    if (std::any_of(s.divisor.begin(), s.divisor.end(), [](int64_t k) { return k < 1; }))
      throw Error(fmt::format("CUDA copy: divisors [{}] are not all positive", fmt::join(s.divisor, ",")));
    if (spec.mode != "constant" && (spec.sources.size() != 1 || num_elements(s.dims) == 0 || divided))
      throw Error(fmt::format("CUDA copy: {} mode needs one non-empty source without divisors", spec.mode));
    std::vector<int64_t> axes = s.out_axis;
    std::sort(axes.begin(), axes.end());
    for (size_t d = 0; d < axes.size(); ++d)
      if (axes.size() != spec.out.size() || axes[d] != int64_t(d))
        throw Error(fmt::format("CUDA copy: out_axis [{}] is no permutation of the output's {} axes",
                                fmt::join(s.out_axis, ","), spec.out.size()));
  }
}

// What tells `spec` apart from any other copy (its kernel's name is a hash of it).
std::string description(const CopySpec& spec) {
  std::string d;
  for (size_t k = 0; k < spec.sources.size(); ++k) {
    const CopySource& s = spec.sources[k];
    d += fmt::format("{}:{}:{}:{};", shape_str(s.dims), fmt::join(s.start, ","), fmt::join(s.step, ","), k);
    if (!s.out_axis.empty()) d += fmt::format("axes {};", fmt::join(s.out_axis, ","));
    if (!s.divisor.empty()) d += fmt::format("divisors {};", fmt::join(s.divisor, ","));
  }
  if (spec.band != 0) d += fmt::format("band {} {};", spec.band, spec.band_k);
  return d + fmt::format("{}:{}:{}", shape_str(spec.out), spec.mode, double_literal(spec.fill));
}

// The kernel `name` of `spec`, writing `out`, and its entry.
std::string copy_kernel(const CopySpec& spec, const std::string& name, const std::string& out,
                        KernelEntry* entry) {
  check(spec);
  const size_t rank = spec.out.size();
  const std::string type(cuda_type(spec.dtype));  // throws for f64, i8
  const int64_t numel = num_elements(spec.out);
  int64_t largest = numel;
  for (const CopySource& s : spec.sources) largest = std::max(largest, num_elements(s.dims));

  const std::string coords = coordinate_decls(spec.out);
  std::string sources;
  std::vector<std::string> params;
  for (size_t k = 0; k < spec.sources.size(); ++k) {
    const CopySource& s = spec.sources[k];
    params.push_back(fmt::format("in{}", k));
    std::vector<std::string> checks, terms;
    if (spec.band != 0)
      checks.push_back(
          fmt::format("o{} - o{} {} {}", rank - 1, rank - 2, spec.band > 0 ? ">=" : "<=", spec.band_k));
    std::string body = fmt::format("    {{  // source {}: [{}]\n", k, fmt::join(s.dims, ", "));
    int64_t pitch = 1;
    for (size_t d = rank; d-- > 0;) {
      const size_t o = out_axis(s, d);
      const bool identity =
          s.start[d] == 0 && s.step[d] == 1 && divisor(s, d) == 1 && s.dims[d] == spec.out[o];
      const std::string c = identity ? fmt::format("o{}", o) : fmt::format("c{}", d);
      if (spec.mode == "constant") {
        const std::vector<std::string> more =
            identity ? std::vector<std::string>{} : range_checks(s, d, spec.out[o]);
        checks.insert(checks.begin(), more.begin(), more.end());
      }
      if (!identity) body += fmt::format("      const Index c{} = {};\n", d, coordinate(spec, s, d));
      terms.insert(terms.begin(), pitch == 1 ? c : fmt::format("{} * {}", c, pitch));
      pitch *= s.dims[d];
    }
    const std::string offset = terms.empty() ? "0" : fmt::format("{}", fmt::join(terms, " + "));
    if (checks.empty()) {
      body += fmt::format("      {}[i] = in{}[{}];\n      continue;\n    }}\n", out, k, offset);
      sources += body;
      break;  // always in range: later sources are never read
    }
    body += fmt::format("      if ({}) {{\n        {}[i] = in{}[{}];\n        continue;\n      }}\n    }}\n",
                        fmt::join(checks, " && "), out, k, offset);
    sources += body;
  }
  const bool all_covered = sources.find("if (") == std::string::npos;
  const std::string fallback =
      all_covered ? "" : fmt::format("    {}[i] = {};\n", out, storage_value(spec.dtype, spec.fill));

  std::vector<std::string> declared;
  for (const std::string& p : params) declared.push_back(fmt::format("const {}* __restrict__ {}", type, p));
  declared.push_back(fmt::format("{}* __restrict__ {}", type, out));
  params.push_back(out);
  *entry = {name, launch_1d(grid_for(numel, 256), 256), std::move(params)};
  return fmt::format("// {}: [{}] from {} source(s), {} mode.", name, fmt::join(spec.out, ", "),
                     spec.sources.size(), spec.mode) +
         fill(kKernel, {{"INDEX", std::string(index_type(largest))},
                        {"T", type},
                        {"NUMEL", fmt::format("{}", numel)},
                        {"DIMS", fmt::format("{}", fmt::join(spec.out, ", "))},
                        {"NAME", name},
                        {"PARAMS", fmt::format("{}", fmt::join(declared, ", "))},
                        {"COORDS", coords},
                        {"SOURCES", sources},
                        {"FALLBACK", fallback}});
}

// The copies of `specs` in one source, the k-th writing `out_name(k)`.
template <typename OutName>
KernelSource copy_source(const std::vector<CopySpec>& specs, OutName&& out_name) {
  if (specs.empty()) throw Error("CUDA copy: no copy");
  std::string described;
  for (const CopySpec& spec : specs) {
    if (spec.dtype != specs[0].dtype) throw Error("CUDA copies: the copies differ in storage type");
    described += description(spec) + "|";
  }
  const DType dtype = specs[0].dtype;
  const std::string base = kernel_name("copy", dtype, hex64(fnv1a64(described)).substr(0, 12));
  std::string src = fmt::format("// dlc copy kernels {}: {} copy(ies).\n", base, specs.size());
  src += device_prelude({{dtype}, false, false});
  auto uses = [&](const char* mode) {
    return std::any_of(specs.begin(), specs.end(), [&](const CopySpec& s) { return s.mode == mode; });
  };
  if (uses("edge"))
    src +=
        "__device__ __forceinline__ long long dlc_clamp(long long c, long long hi) { return c < 0 ? 0 : (c > "
        "hi ? hi : c); }\n";
  if (uses("reflect"))
    src +=
        "// Reflection without the edge: period 2 (n - 1).\n"
        "__device__ __forceinline__ long long dlc_reflect(long long c, long long n, long long period) {\n"
        "  c = ((c % period) + period) % period;\n"
        "  return c >= n ? period - c : c;\n"
        "}\n";
  if (uses("wrap"))
    src +=
        "__device__ __forceinline__ long long dlc_wrap(long long c, long long n) { return ((c % n) + n) % n; "
        "}\n";
  KernelSource ks = KernelSource::named("copy", base);
  for (size_t k = 0; k < specs.size(); ++k) {
    KernelEntry entry;
    src +=
        copy_kernel(specs[k], specs.size() == 1 ? base : fmt::format("{}_{}", base, k), out_name(k), &entry);
    ks.entries.push_back(std::move(entry));
  }
  ks.source = std::move(src);
  return ks;
}

}  // namespace

KernelSource emit_copy(const CopySpec& spec) {
  return copy_source({spec}, [](size_t) { return std::string("out0"); });
}

KernelSource emit_copies(const std::vector<CopySpec>& specs) {
  return copy_source(specs, [](size_t k) { return fmt::format("out{}", k); });
}

}  // namespace dlc::codegen::cuda
