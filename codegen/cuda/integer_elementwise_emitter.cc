// Integer elementwise kernels (integer_elementwise_emitter.h).
#include "codegen/cuda/integer_elementwise_emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "codegen/cuda/broadcast_layout.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"
#include "dlc/hash.h"

namespace dlc::codegen::cuda {

namespace {

// The result of operands a and b, of type R (T, or unsigned char for a comparison).
const std::map<std::string, const char*>& expressions() {
  static const std::map<std::string, const char*> table = {
      {"Add", "R(a + b)"},      {"Sub", "R(a - b)"},
      {"Mul", "R(a * b)"},      {"Max", "a < b ? b : a"},
      {"Min", "b < a ? b : a"}, {"Equal", "R(a == b)"},
      {"Greater", "R(a > b)"},  {"GreaterOrEqual", "R(a >= b)"},
      {"Less", "R(a < b)"},     {"LessOrEqual", "R(a <= b)"}};
  return table;
}

constexpr const char* kKernel = R"(
using T = ${T};
using R = ${R};  // the result's type
using Index = ${INDEX};
constexpr Index kNumel = ${NUMEL};

// Output element i of [${DIMS}]: ${OP} of a = in0[${A}] and b = in1[${B}].
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    const T* __restrict__ in0, const T* __restrict__ in1, R* __restrict__ out0) {
  for (Index i = Index(blockIdx.x) * 256 + Index(threadIdx.x); i < kNumel; i += Index(gridDim.x) * 256) {
    const T a = in0[${A}], b = in1[${B}];
    out0[i] = ${EXPR};
  }
}
)";

}  // namespace

bool is_integer_binary_op(const std::string& op) { return expressions().count(op) > 0; }

bool is_integer_comparison(const std::string& op) {
  return op == "Equal" || op == "Greater" || op == "GreaterOrEqual" || op == "Less" || op == "LessOrEqual";
}

bool is_integer_storage(DType t) { return t == DType::I32 || t == DType::I64 || t == DType::U8; }

KernelSource emit_integer_binary(const IntegerBinarySpec& spec) {
  const auto it = expressions().find(spec.op);
  if (it == expressions().end()) throw Error(fmt::format("CUDA integer elementwise: no op {}", spec.op));
  if (!is_integer_storage(spec.dtype))
    throw Error(fmt::format("CUDA integer elementwise: dtype {} (i32, i64, u8)", dtype_name(spec.dtype)));
  const BroadcastLayout layout = broadcast_layout(spec.out, {spec.a, spec.b});
  const int64_t numel = num_elements(spec.out);
  const std::string a = operand_offset(layout, 0), b = operand_offset(layout, 1);
  const std::string name =
      kernel_name("int_" + std::string(1, char(std::tolower(spec.op[0]))) + spec.op.substr(1), spec.dtype,
                  hex64(fnv1a64(fmt::format("{}|{}|{}", shape_str(spec.out), a, b))).substr(0, 12));
  KernelSource ks = KernelSource::named("integer_elementwise", name);
  ks.source =
      fmt::format("// dlc integer elementwise kernel {}: {} of {} and {} to {} ({}).\n", name, spec.op,
                  shape_str(spec.a), shape_str(spec.b), shape_str(spec.out), dtype_name(spec.dtype));
  ks.source +=
      fill(kKernel, {{"T", std::string(cuda_type(spec.dtype))},
                     {"R", std::string(cuda_type(is_integer_comparison(spec.op) ? DType::Bool : spec.dtype))},
                     {"INDEX", std::string(index_type(std::max<int64_t>(numel, 1)))},
                     {"NUMEL", fmt::format("{}", numel)},
                     {"DIMS", fmt::format("{}", fmt::join(spec.out, ", "))},
                     {"OP", spec.op},
                     {"A", a},
                     {"B", b},
                     {"NAME", name},
                     {"EXPR", it->second}});
  ks.entries.push_back({name, launch_1d(grid_for(numel, 256), 256), {"in0", "in1", "out0"}});
  return ks;
}

}  // namespace dlc::codegen::cuda
