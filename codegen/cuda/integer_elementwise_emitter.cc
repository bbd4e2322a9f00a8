// Integer elementwise kernels (integer_elementwise_emitter.h).
#include "codegen/cuda/integer_elementwise_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "codegen/cuda/broadcast_layout.h"
#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"
#include "dlc/hash.h"

namespace dlc::codegen::cuda {

namespace {

// The result of operands a, b (and c), as type R, for the ops of one integer type (Mod's C_FMOD is
// its attribute; Pow, whose operands' kinds vary, is pow_expression's).
const std::map<std::string, const char*>& expressions() {
  static const std::map<std::string, const char*> table = {{"Add", "R(a + b)"},
                                                           {"Sub", "R(a - b)"},
                                                           {"Mul", "R(a * b)"},
                                                           {"Div", "dlc_div(a, b)"},
                                                           {"Mod", "dlc_mod(a, b, C_FMOD)"},
                                                           {"Max", "a < b ? b : a"},
                                                           {"Min", "b < a ? b : a"},
                                                           {"Equal", "R(a == b)"},
                                                           {"Greater", "R(a > b)"},
                                                           {"Less", "R(a < b)"},
                                                           {"GreaterOrEqual", "R(a >= b)"},
                                                           {"LessOrEqual", "R(a <= b)"},
                                                           {"Where", "a != 0 ? b : c"}};
  return table;
}

// Clip of a by its present bounds (b the first present one), as the CPU: min(max(a, lo), hi).
std::string clip_expression(bool min, bool max) {
  if (min && max) return "c < (a < b ? b : a) ? c : (a < b ? b : a)";
  if (min) return "a < b ? b : a";
  return max ? "b < a ? b : a" : "a";
}

// Cast as the CPU kernel computes it (runtime/cpu/kernels/elementwise.cc): through int64 from an
// integer or bool (a bool is 0 or 1), through double from a float; to bool by != 0, to an integer
// from a float truncating and saturating, to a 16-bit float through float.
std::string cast_expression(DType from, DType to) {
  const std::string value = from == DType::Bool      ? "(long long)(a != 0)"
                            : is_storage_float(from) ? "double(dlc_to_float(a))"
                                                     : "(long long)a";
  if (to == DType::Bool) return fmt::format("R({} != 0)", value);
  if (is_storage_float(to)) return fmt::format("dlc_from_float<R>(float({}))", value);
  return is_storage_float(from) ? fmt::format("R(dlc_float_to_int64({}))", value)
                                : fmt::format("R({})", value);
}

// Pow as the CPU kernel computes it (runtime/cpu/kernels/elementwise.cc).
std::string pow_expression(DType base, DType exponent) {
  if (is_integer_storage(base) && is_integer_storage(exponent)) return "dlc_int_pow(a, (long long)b)";
  if (is_integer_storage(base)) return "R(dlc_float_to_int64(pow(double(a), double(dlc_to_float(b)))))";
  return "dlc_from_float<R>(powf(dlc_to_float(a), float(b)))";
}

// Div, Mod and Pow's helpers.
constexpr const char* kHelpers = R"(
template <typename T>
__device__ __forceinline__ constexpr bool dlc_signed() { return T(-1) < T(0); }
template <typename T>
__device__ __forceinline__ T dlc_div(T a, T b) {
  if (b == T(0)) return T(0);  // the CPU kernel reports a zero divisor instead
  if (dlc_signed<T>() && b == T(-1)) return T(0ULL - (unsigned long long)a);  // MIN / -1 wraps, no trap
  return T(a / b);
}
template <typename T>
__device__ __forceinline__ T dlc_mod(T a, T b, bool c_fmod) {
  if (b == T(0)) return T(0);
  T r = dlc_signed<T>() && b == T(-1) ? T(0) : T(a % b);
  if (dlc_signed<T>() && !c_fmod && r != T(0) && ((r < T(0)) != (b < T(0)))) r = T(r + b);
  return r;
}
template <typename T>
__device__ __forceinline__ T dlc_int_pow(T a, long long b) {
  if (b < 0) {
    if (a == T(1)) return T(1);
    if (dlc_signed<T>() && a == T(-1)) return (b & 1) ? T(-1) : T(1);
    return T(0);
  }
  unsigned long long base = (unsigned long long)a, result = 1;
  for (; b; b >>= 1, base *= base)
    if (b & 1) result *= base;
  return T(result);
}
// Truncation toward zero; NaN gives 0 and out-of-range values saturate.
__device__ __forceinline__ long long dlc_float_to_int64(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2233720368547758e18) return 9223372036854775807LL;
  if (v <= -9.2233720368547758e18) return -9223372036854775807LL - 1;
  return (long long)v;
}
)";

constexpr const char* kKernel = R"(
using R = ${R};  // the result's type
using Index = ${INDEX};
constexpr Index kNumel = ${NUMEL};
${HELPERS}
// Output element i of [${DIMS}]: ${OP} of ${OPERANDS}.
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    ${PARAMS}R* __restrict__ out0) {
  for (Index i = Index(blockIdx.x) * 256 + Index(threadIdx.x); i < kNumel; i += Index(gridDim.x) * 256) {
${LOADS}    out0[i] = ${EXPR};
  }
}
)";

}  // namespace

bool is_integer_comparison(const std::string& op) {
  return op == "Equal" || op == "Greater" || op == "GreaterOrEqual" || op == "Less" || op == "LessOrEqual";
}

bool is_integer_storage(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::I8 || t == DType::U8;
}

bool takes_integer_kernel(const std::string& op, const std::vector<DType>& operands, DType result) {
  const auto storable = [](DType t) {
    return is_integer_storage(t) || is_storage_float(t) || t == DType::Bool;
  };
  if (op == "Cast")
    return operands.size() == 1 && (is_integer_storage(operands[0]) || is_integer_storage(result)) &&
           storable(operands[0]) && storable(result);
  if (op == "Pow")
    return operands.size() == 2 && (is_integer_storage(operands[0]) || is_integer_storage(operands[1])) &&
           std::all_of(operands.begin(), operands.end(),
                       [](DType t) { return is_integer_storage(t) || is_storage_float(t); });
  if (op == "Clip")
    return !operands.empty() && operands.size() <= 3 && is_integer_storage(operands[0]) &&
           std::all_of(operands.begin(), operands.end(), [&](DType t) { return t == operands[0]; });
  if (op == "Where")
    return operands.size() == 3 && operands[0] == DType::Bool && is_integer_storage(operands[1]) &&
           operands[2] == operands[1];
  return expressions().count(op) && operands.size() == 2 && is_integer_storage(operands[0]) &&
         operands[1] == operands[0];
}

DType integer_result_dtype(const std::string& op, const std::vector<DType>& operands) {
  if (is_integer_comparison(op)) return DType::Bool;
  return op == "Where" ? operands.at(1) : operands.at(0);
}

KernelSource emit_integer_elementwise(const IntegerElementwiseSpec& spec) {
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  std::vector<std::string> types;  // "i64[6,1]", …
  for (const TensorType& t : spec.operands) {
    dtypes.push_back(t.dtype);
    shapes.push_back(t.shape);
    types.push_back(t.str());
  }
  if (!takes_integer_kernel(spec.op, dtypes, spec.out.dtype))
    throw Error(fmt::format("CUDA integer elementwise: no {} of {}", spec.op, fmt::join(types, ", ")));
  if (spec.op != "Cast" && spec.out.dtype != integer_result_dtype(spec.op, dtypes))
    throw Error(fmt::format("CUDA integer elementwise: {} gives {}, not {}", spec.op,
                            dtype_name(integer_result_dtype(spec.op, dtypes)), dtype_name(spec.out.dtype)));
  const BroadcastLayout layout = broadcast_layout(spec.out.shape, shapes);
  const int64_t numel = spec.out.numel();
  static const char* const kNames[] = {"a", "b", "c"};
  std::string params, loads, operands, key = shape_str(spec.out.shape);
  for (size_t k = 0; k < dtypes.size(); ++k) {
    const std::string type(cuda_type(dtypes[k])), offset = operand_offset(layout, k);
    params += fmt::format("const {}* __restrict__ in{}, ", type, k);
    loads += fmt::format("    const {} {} = in{}[{}];\n", type, kNames[k], k, offset);
    operands += fmt::format("{}{} = in{}[{}]", k ? ", " : "", kNames[k], k, offset);
    key += fmt::format("|{}:{}", dtype_name(dtypes[k]), offset);
  }
  const bool c_fmod = spec.op == "Mod" && spec.c_fmod;
  if (spec.op == "Clip" && dtypes.size() != size_t(1 + spec.clip_min + spec.clip_max))
    throw Error(fmt::format("CUDA integer elementwise: Clip has {} operands for {} bounds", dtypes.size(),
                            int(spec.clip_min) + int(spec.clip_max)));
  const std::string expr = spec.op == "Clip"   ? clip_expression(spec.clip_min, spec.clip_max)
                           : spec.op == "Cast" ? cast_expression(dtypes[0], spec.out.dtype)
                           : spec.op == "Pow"  ? pow_expression(dtypes[0], dtypes[1])
                           : spec.op == "Mod"  ? fmt::format("dlc_mod(a, b, {})", c_fmod)
                                               : std::string(expressions().at(spec.op));
  const std::string name =
      kernel_name("int_" + std::string(1, char(std::tolower(spec.op[0]))) + spec.op.substr(1), spec.out.dtype,
                  hex64(fnv1a64(fmt::format("{}|{}", key, expr))).substr(0, 12));
  KernelSource ks = KernelSource::named("integer_elementwise", name);
  ks.source = fmt::format("// dlc integer elementwise kernel {}: {} of {} to {}.\n", name, spec.op,
                          fmt::join(types, ", "), spec.out.str());
  std::vector<DType> floats;
  for (DType t : dtypes)
    if (is_storage_float(t)) floats.push_back(t);
  if (is_storage_float(spec.out.dtype)) floats.push_back(spec.out.dtype);
  if (!floats.empty()) ks.source += device_prelude({floats, false, false});
  const bool helpers = spec.op == "Div" || spec.op == "Mod" || spec.op == "Pow" ||
                       (spec.op == "Cast" && is_storage_float(dtypes[0]));
  ks.source += fill(kKernel, {{"R", std::string(cuda_type(spec.out.dtype))},
                              {"INDEX", std::string(index_type(std::max<int64_t>(numel, 1)))},
                              {"NUMEL", fmt::format("{}", numel)},
                              {"HELPERS", helpers ? kHelpers : ""},
                              {"DIMS", fmt::format("{}", fmt::join(spec.out.shape, ", "))},
                              {"OP", spec.op},
                              {"OPERANDS", operands},
                              {"NAME", name},
                              {"PARAMS", params},
                              {"LOADS", loads},
                              {"EXPR", expr}});
  std::vector<std::string> entry_params;
  for (size_t k = 0; k < dtypes.size(); ++k) entry_params.push_back(fmt::format("in{}", k));
  entry_params.push_back("out0");
  ks.entries.push_back({name, launch_1d(grid_for(numel, 256), 256), entry_params});
  return ks;
}

}  // namespace dlc::codegen::cuda
