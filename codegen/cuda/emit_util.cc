// Helpers shared by the CUDA kernel emitters (emit_util.h).
#include "codegen/cuda/emit_util.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "dlc/error.h"

namespace dlc::codegen::cuda {

bool is_storage_float(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

void require_storage_float(DType t, std::string_view what) {
  if (!is_storage_float(t))
    throw Error(fmt::format("{}: dtype {} is not supported by the CUDA kernels (f32, f16, bf16)", what,
                            dtype_name(t)));
}

void require_index_type(DType t, std::string_view what) {
  if (t != DType::I32 && t != DType::I64)
    throw Error(fmt::format("{}: dtype {} is not an index type (i32, i64)", what, dtype_name(t)));
}

std::string_view cuda_type(DType t) {
  switch (t) {
    case DType::F32:
      return "float";
    case DType::F16:
      return "__half";
    case DType::BF16:
      return "__nv_bfloat16";
    case DType::Bool:
    case DType::U8:
      return "unsigned char";
    case DType::I8:
      return "signed char";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long long";
    default:
      throw Error(fmt::format("dtype {} has no CUDA kernel type", dtype_name(t)));
  }
}

namespace {

// Shortest round-trip text of a finite value, with a ".0" where it would read as an integer.
template <typename F>
std::string finite_literal(F v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string float_literal(double v) {
  const float f = float(v);
  if (std::isnan(f)) return "dlc_nan()";
  if (std::isinf(f)) return f > 0 ? "dlc_inf()" : "(-dlc_inf())";
  return finite_literal(f) + "f";
}

std::string double_literal(double v) {
  if (std::isnan(v)) return "double(dlc_nan())";
  if (std::isinf(v)) return v > 0 ? "double(dlc_inf())" : "(-double(dlc_inf()))";
  return finite_literal(v);
}

std::string_view index_type(int64_t max_index) {
  // Headroom for the largest grid-stride step (2^20 blocks of 1024 threads).
  return max_index < (int64_t(1) << 30) ? "int" : "long long";
}

int64_t grid_for(int64_t work, int64_t per_block) {
  const int64_t blocks = (work + per_block - 1) / std::max<int64_t>(per_block, 1);
  return std::clamp<int64_t>(blocks, 1, int64_t(1) << 20);
}

std::string coordinate_decls(const Shape& dims, int64_t skipped_axis) {
  const int64_t rank = int64_t(dims.size());
  const int64_t first = skipped_axis == 0 ? 1 : 0;  // the first axis declared; rest is divided down to it
  if (first >= rank) return "";
  std::string decls = "    Index rest = i;\n";
  for (int64_t d = rank - 1; d >= first; --d) {
    if (d == 0) {
      decls += "    const Index o0 = rest;\n";
      continue;
    }
    if (d != skipped_axis) decls += fmt::format("    const Index o{} = rest % {};\n", d, dims[size_t(d)]);
    if (d > first) decls += fmt::format("    rest /= {};\n", dims[size_t(d)]);
  }
  return decls;
}

std::string storage_value(DType t, double v) {
  if (is_storage_float(t)) return fmt::format("dlc_from_float<T>({})", float_literal(v));
  if (t == DType::Bool) return v != 0 ? "T(1)" : "T(0)";
  return fmt::format("T({}LL)", int64_t(v));
}

int64_t normalized_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1))
    throw Error(fmt::format("axis {} out of range for rank {}", axis, rank));
  return axis < 0 ? axis + rank : axis;
}

AxisView axes_view(const Shape& dims, int64_t first, int64_t last) {
  AxisView v;
  for (int64_t d = 0; d < int64_t(dims.size()); ++d)
    (d < first ? v.outer : d <= last ? v.extent : v.inner) *= dims[size_t(d)];
  return v;
}

AxisView axis_view(const Shape& dims, int64_t axis) {
  const int64_t a = normalized_axis(axis, int64_t(dims.size()));
  return axes_view(dims, a, a);
}

std::string dims_tag(const Shape& dims) {
  if (dims.empty()) return "scalar";
  return fmt::format("{}", fmt::join(dims, "x"));
}

std::string kernel_name(std::string_view kind, DType dtype, std::string_view detail) {
  std::string name = fmt::format("dlc_{}_{}", kind, dtype_name(dtype));
  if (!detail.empty()) name += fmt::format("_{}", detail);
  return name;
}

std::string fill(std::string_view tmpl, const TemplateVars& vars) {
  std::string out;
  std::set<std::string> used;
  size_t pos = 0;
  while (true) {
    const size_t open = tmpl.find("${", pos);
    if (open == std::string_view::npos) break;
    const size_t close = tmpl.find('}', open);
    if (close == std::string_view::npos) throw Error("CUDA template: unterminated '${'");
    const std::string key(tmpl.substr(open + 2, close - open - 2));
    auto it = std::find_if(vars.begin(), vars.end(), [&](const auto& kv) { return kv.first == key; });
    if (it == vars.end()) throw Error(fmt::format("CUDA template: no value for '${{{}}}'", key));
    out.append(tmpl.substr(pos, open - pos));
    out += it->second;
    used.insert(key);
    pos = close + 1;
  }
  out.append(tmpl.substr(pos));
  for (const auto& kv : vars)
    if (!used.count(kv.first)) throw Error(fmt::format("CUDA template: '{}' is not used", kv.first));
  return out;
}

}  // namespace dlc::codegen::cuda
