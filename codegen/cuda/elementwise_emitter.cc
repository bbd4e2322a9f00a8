// Fused elementwise kernels from expression programs (elementwise_emitter.h).
#include "codegen/cuda/elementwise_emitter.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/broadcast_layout.h"
#include "codegen/cuda/device_prelude.h"
#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"
#include "dlc/hash.h"

namespace dlc::codegen::cuda {

namespace {

// Device helpers of ops that are more than an operator or a libdevice call; emitted when used.
std::string op_helper(ExprOp op) {
  switch (op) {
    case ExprOp::Max:
      return "__device__ __forceinline__ float dlc_max(float a, float b) { return b != b || a < b ? b : a; "
             "}\n";
    case ExprOp::Min:
      return "__device__ __forceinline__ float dlc_min(float a, float b) { return b != b || b < a ? b : a; "
             "}\n";
    case ExprOp::Relu:
      return "__device__ __forceinline__ float dlc_relu(float x) { return x < 0.0f ? 0.0f : x; }\n";
    case ExprOp::Sigmoid:
      return "__device__ __forceinline__ float dlc_sigmoid(float x) {\n"
             "  return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));\n"
             "}\n";
    case ExprOp::Clip:
      return "__device__ __forceinline__ float dlc_clip(float x, float lo, float hi) {\n"
             "  x = lo != lo || x < lo ? lo : x;\n"
             "  return hi != hi || hi < x ? hi : x;\n"
             "}\n";
    case ExprOp::ReluGrad:
      return "__device__ __forceinline__ float dlc_relu_grad(float dy, float y) { return y > 0.0f ? dy : "
             "0.0f; }\n";
    case ExprOp::Sign:  // 0 and NaN pass through, as the CPU kernel
      return "__device__ __forceinline__ float dlc_sign(float x) { return x > 0.0f ? 1.0f : x < 0.0f ? -1.0f "
             ": x; "
             "}\n";
    case ExprOp::Softplus:  // log(1 + exp(x)) without overflow, as the CPU kernel
      return "__device__ __forceinline__ float dlc_softplus(float x) {\n"
             "  return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));\n"
             "}\n";
    default:
      return "";
  }
}

// The CUDA math library's float function of a one-operand math op (Round: rintf, half to even).
const char* math_function(ExprOp op) {
  switch (op) {
    case ExprOp::Sin:
      return "sinf";
    case ExprOp::Cos:
      return "cosf";
    case ExprOp::Tan:
      return "tanf";
    case ExprOp::Asin:
      return "asinf";
    case ExprOp::Acos:
      return "acosf";
    case ExprOp::Atan:
      return "atanf";
    case ExprOp::Sinh:
      return "sinhf";
    case ExprOp::Cosh:
      return "coshf";
    case ExprOp::Asinh:
      return "asinhf";
    case ExprOp::Acosh:
      return "acoshf";
    case ExprOp::Atanh:
      return "atanhf";
    case ExprOp::Floor:
      return "floorf";
    case ExprOp::Ceil:
      return "ceilf";
    case ExprOp::Round:
      return "rintf";
    case ExprOp::Expm1:
      return "expm1f";
    default:
      throw Error(fmt::format("expression program: {} is no CUDA math function", expr_op_name(op)));
  }
}

std::string cast_expr(const std::string& a, DType to) {
  if (to == DType::F32) return a;
  if (to == DType::Bool) return fmt::format("({} != 0.0f ? 1.0f : 0.0f)", a);
  return fmt::format("dlc_to_float(dlc_from_float<{}>({}))", cuda_type(to), a);
}

// The f32 expression of instruction `i` (operands are values v<k>).
std::string instr_expr(const ExprInstr& i) {
  auto a = [&](size_t k) { return fmt::format("v{}", i.args[k]); };
  switch (i.op) {
    case ExprOp::Input:
      return fmt::format("in{}", i.input);
    case ExprOp::Constant:
      return float_literal(i.value);
    case ExprOp::Add:
      return a(0) + " + " + a(1);
    case ExprOp::Sub:
      return a(0) + " - " + a(1);
    case ExprOp::Mul:
      return a(0) + " * " + a(1);
    case ExprOp::Div:
      return a(0) + " / " + a(1);
    case ExprOp::Pow:
      return fmt::format("powf({}, {})", a(0), a(1));
    case ExprOp::Max:
      return fmt::format("dlc_max({}, {})", a(0), a(1));
    case ExprOp::Min:
      return fmt::format("dlc_min({}, {})", a(0), a(1));
    case ExprOp::Neg:
      return "-" + a(0);
    case ExprOp::Abs:
      return fmt::format("fabsf({})", a(0));
    case ExprOp::Relu:
      return fmt::format("dlc_relu({})", a(0));
    case ExprOp::Sigmoid:
      return fmt::format("dlc_sigmoid({})", a(0));
    case ExprOp::Tanh:
      return fmt::format("tanhf({})", a(0));
    case ExprOp::Exp:
      return fmt::format("expf({})", a(0));
    case ExprOp::Log:
      return fmt::format("logf({})", a(0));
    case ExprOp::Sqrt:
      return fmt::format("sqrtf({})", a(0));
    case ExprOp::Erf:
      return fmt::format("erff({})", a(0));
    case ExprOp::Where:
      return fmt::format("{} != 0.0f ? {} : {}", a(0), a(1), a(2));
    case ExprOp::Cast:
      return cast_expr(a(0), i.to);
    case ExprOp::Clip:
      return fmt::format("dlc_clip({}, {}, {})", a(0), a(1), a(2));
    case ExprOp::ReluGrad:
      return fmt::format("dlc_relu_grad({}, {})", a(0), a(1));
    case ExprOp::Reciprocal:
      return "1.0f / " + a(0);
    case ExprOp::Equal:
      return fmt::format("{} == {} ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::Greater:
      return fmt::format("{} > {} ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::GreaterOrEqual:
      return fmt::format("{} >= {} ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::Less:
      return fmt::format("{} < {} ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::LessOrEqual:
      return fmt::format("{} <= {} ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::Sin:
    case ExprOp::Cos:
    case ExprOp::Tan:
    case ExprOp::Asin:
    case ExprOp::Acos:
    case ExprOp::Atan:
    case ExprOp::Sinh:
    case ExprOp::Cosh:
    case ExprOp::Asinh:
    case ExprOp::Acosh:
    case ExprOp::Atanh:
    case ExprOp::Floor:
    case ExprOp::Ceil:
    case ExprOp::Round:
    case ExprOp::Expm1:
      return fmt::format("{}({})", math_function(i.op), a(0));
    case ExprOp::Sign:
      return fmt::format("dlc_sign({})", a(0));
    case ExprOp::Softplus:
      return fmt::format("dlc_softplus({})", a(0));
    case ExprOp::Softsign:
      return fmt::format("{0} / (1.0f + fabsf({0}))", a(0));
    case ExprOp::And:
      return fmt::format("{} != 0.0f && {} != 0.0f ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::Or:
      return fmt::format("{} != 0.0f || {} != 0.0f ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::Xor:
      return fmt::format("({} != 0.0f) != ({} != 0.0f) ? 1.0f : 0.0f", a(0), a(1));
    case ExprOp::Not:
      return fmt::format("{} == 0.0f ? 1.0f : 0.0f", a(0));
    case ExprOp::Fmod:
      return fmt::format("fmodf({}, {})", a(0), a(1));
  }
  throw Error("expression program: unknown op");
}

// How the vector path reads operand k.
enum class VecRead { Load4, Splat };

struct Plan {
  BroadcastLayout layout;
  bool vector = false;             // a 4-wide path exists
  std::vector<VecRead> vec_reads;  // per input
};

Plan plan_layout(const ExprProgram& p) {
  std::vector<Shape> shapes;
  for (const ExprInput& in : p.inputs) shapes.push_back(in.dims);
  Plan plan{broadcast_layout(p.dims, shapes), true, {}};
  const Shape& dims = plan.layout.dims;
  const size_t last = dims.size() - 1;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    const std::vector<int64_t>& st = plan.layout.strides[k];
    switch (plan.layout.access[k]) {
      case Access::Full:
        plan.vec_reads.push_back(VecRead::Load4);
        break;
      case Access::Scalar:
        plan.vec_reads.push_back(VecRead::Splat);
        break;
      case Access::Strided: {
        // 4 consecutive outputs stay in one row (rows a multiple of 4 long) and read either one
        // element (stride 0) or 4 consecutive, 4-aligned ones.
        bool ok = dims[last] % 4 == 0 && (st[last] == 0 || st[last] == 1);
        if (ok && st[last] == 1)
          for (size_t d = 0; d < last; ++d) ok = ok && st[d] % 4 == 0;
        plan.vector = plan.vector && ok;
        plan.vec_reads.push_back(st[last] == 0 ? VecRead::Splat : VecRead::Load4);
        break;
      }
    }
  }
  return plan;
}

// The element types the program's code touches (for the prelude).
std::vector<DType> program_types(const ExprProgram& program) {
  std::vector<DType> types = {DType::F32};
  for (const ExprInput& in : program.inputs) types.push_back(in.dtype);
  for (const ExprOutput& out : program.outputs) types.push_back(out.dtype);
  for (const ExprInstr& i : program.instrs)
    if (i.op == ExprOp::Cast) types.push_back(i.to);
  return types;
}

// The helpers of the ops the program uses, once each.
std::string used_op_helpers(const ExprProgram& program) {
  std::string helpers;
  std::vector<ExprOp> seen;
  for (const ExprInstr& i : program.instrs)
    if (std::find(seen.begin(), seen.end(), i.op) == seen.end()) {
      seen.push_back(i.op);
      helpers += op_helper(i.op);
    }
  return helpers;
}

// dlc_compute (the program on one element) and the offsets of the strided operands (after Index).
std::string compute_source(const ExprProgram& program, const BroadcastLayout& layout) {
  const size_t ni = program.inputs.size(), no = program.outputs.size();
  std::vector<std::string> compute_params;
  for (size_t k = 0; k < ni; ++k) compute_params.push_back(fmt::format("float in{}", k));
  for (size_t k = 0; k < no; ++k) compute_params.push_back(fmt::format("float& out{}", k));
  std::string src = fmt::format(
      "\n// The program on one element (f32).\n__device__ __forceinline__ void dlc_compute({}) {{\n",
      fmt::join(compute_params, ", "));
  for (size_t k = 0; k < program.instrs.size(); ++k)
    src += fmt::format("  const float v{} = {};\n", k, instr_expr(program.instrs[k]));
  for (size_t k = 0; k < no; ++k) src += fmt::format("  out{} = v{};\n", k, program.outputs[k].value);
  src += "}\n";

  // Offsets of the strided operands.
  for (size_t k = 0; k < ni; ++k)
    if (layout.access[k] == Access::Strided)
      src += fmt::format(
          "// Offset in input {} ({}, {}) of output element i.\n"
          "__device__ __forceinline__ Index dlc_offset{}(Index i) {{ return {}; }}\n",
          k, program.inputs[k].name, shape_str(program.inputs[k].dims), k,
          strided_offset(layout.dims, layout.strides[k]));
  return src;
}

// Where input k is read for output element i.
std::string input_at(const BroadcastLayout& layout, size_t k) {
  return layout.access[k] == Access::Full     ? "i"
         : layout.access[k] == Access::Scalar ? "0"
                                              : fmt::format("dlc_offset{}(i)", k);
}

std::string input_param(const ExprProgram& program, size_t k) {
  return fmt::format("const {}* __restrict__ in{}", cuda_type(program.inputs[k].dtype), k);
}

constexpr const char* kKernel = R"(
// Output element i of the [${DIMS}] result, 4 at a time where every pointer is aligned.
extern "C" __global__ void __launch_bounds__(256) ${NAME}(
    ${PARAMS}) {
  const Index tid = Index(blockIdx.x) * 256 + Index(threadIdx.x);
  const Index stride = Index(gridDim.x) * 256;
  Index first = 0;  // where the one-element loop starts
${VECTOR_PATH}  for (Index i = first + tid; i < kNumel; i += stride) {
${SCALAR_BODY}  }
}
)";

constexpr const char* kVectorPath = R"(  if (${ALIGNED}) {
    for (Index i = tid * 4; i < kVecEnd; i += stride * 4) {
${VECTOR_BODY}    }
    first = kVecEnd;
  }
)";

}  // namespace

KernelSource emit_elementwise(const ExprProgram& program) {
  program.validate();
  const Plan plan = plan_layout(program);
  const BroadcastLayout& layout = plan.layout;
  const int64_t numel = num_elements(program.dims);
  const size_t ni = program.inputs.size(), no = program.outputs.size();
  const std::string name = "dlc_elementwise_" + hex64(fnv1a64(program.str())).substr(0, 12);

  std::string src = fmt::format("// dlc fused elementwise kernel {}: {} elements.\n", name, numel);
  std::string listing = program.str();
  for (size_t pos = 0; pos < listing.size();) {
    const size_t end = listing.find('\n', pos);
    src += "//   " + listing.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  src += device_prelude({program_types(program), plan.vector, false});

  // Helpers of the ops used (once each), then the constants.
  std::string helpers = used_op_helpers(program);
  if (plan.vector &&
      std::find(plan.vec_reads.begin(), plan.vec_reads.end(), VecRead::Splat) != plan.vec_reads.end())
    helpers +=
        "__device__ __forceinline__ void dlc_splat4(float s, float (&v)[4]) { v[0] = v[1] = v[2] = v[3] = s; "
        "}\n";
  if (!helpers.empty()) src += "\n" + helpers;
  src += fmt::format("\nusing Index = {};\nconstexpr Index kNumel = {};\n", index_type(numel), numel);
  if (plan.vector)
    src += fmt::format("constexpr Index kVecEnd = {};  // kNumel rounded down to 4\n", numel / 4 * 4);

  src += compute_source(program, layout);

  // Parameters and the per-element loads.
  std::vector<std::string> params, scalar_args, aligned;
  std::string vec_loads;
  for (size_t k = 0; k < ni; ++k) {
    params.push_back(input_param(program, k));
    const std::string at = input_at(layout, k);
    scalar_args.push_back(fmt::format("dlc_to_float(in{}[{}])", k, at));
    if (plan.vector && plan.vec_reads[k] == VecRead::Load4) {
      vec_loads += fmt::format("      dlc_load4(in{} + {}, a{});\n", k, at, k);
      aligned.push_back(fmt::format("dlc_aligned4(in{})", k));
    } else if (plan.vector) {
      vec_loads += fmt::format("      dlc_splat4(dlc_to_float(in{}[{}]), a{});\n", k, at, k);
    }
  }
  std::string scalar_body, vec_body, vec_decl, vec_stores;
  std::vector<std::string> vec_args;
  for (size_t k = 0; k < ni; ++k) vec_args.push_back(fmt::format("a{}[k]", k));
  for (size_t k = 0; k < no; ++k) {
    const std::string t(cuda_type(program.outputs[k].dtype));
    params.push_back(fmt::format("{}* __restrict__ out{}", t, k));
    scalar_args.push_back(fmt::format("r{}", k));
    vec_args.push_back(fmt::format("r{}[k]", k));
    scalar_body += fmt::format("    float r{};\n", k);
    vec_stores += fmt::format("      dlc_store4(out{} + i, r{});\n", k, k);
    aligned.push_back(fmt::format("dlc_aligned4(out{})", k));
  }
  scalar_body += fmt::format("    dlc_compute({});\n", fmt::join(scalar_args, ", "));
  for (size_t k = 0; k < no; ++k)
    scalar_body +=
        fmt::format("    out{}[i] = dlc_from_float<{}>(r{});\n", k, cuda_type(program.outputs[k].dtype), k);

  std::string vector_path;
  if (plan.vector) {
    std::vector<std::string> arrays;
    for (size_t k = 0; k < ni; ++k) arrays.push_back(fmt::format("a{}[4]", k));
    for (size_t k = 0; k < no; ++k) arrays.push_back(fmt::format("r{}[4]", k));
    vec_body = fmt::format("      float {};\n", fmt::join(arrays, ", ")) + vec_loads +
               fmt::format("#pragma unroll\n      for (int k = 0; k < 4; ++k) dlc_compute({});\n",
                           fmt::join(vec_args, ", ")) +
               vec_stores;
    vector_path = fill(
        kVectorPath, {{"ALIGNED", fmt::format("{}", fmt::join(aligned, " && "))}, {"VECTOR_BODY", vec_body}});
  }
  src += fill(kKernel, {{"DIMS", fmt::format("{}", fmt::join(program.dims, ", "))},
                        {"NAME", name},
                        {"PARAMS", fmt::format("{}", fmt::join(params, ", "))},
                        {"VECTOR_PATH", vector_path},
                        {"SCALAR_BODY", scalar_body}});

  KernelSource ks = KernelSource::named("elementwise", name, std::move(src));
  std::vector<std::string> names;
  for (const ExprInput& in : program.inputs) names.push_back(in.name);
  for (const ExprOutput& out : program.outputs) names.push_back(out.name);
  ks.entries.push_back(
      {name, launch_1d(grid_for(numel, plan.vector ? 256 * 4 : 256), 256), std::move(names)});
  return ks;
}

ProgramSource program_source(const ExprProgram& program) {
  program.validate();
  std::vector<Shape> shapes;
  for (const ExprInput& in : program.inputs) shapes.push_back(in.dims);
  const BroadcastLayout layout = broadcast_layout(program.dims, shapes);
  ProgramSource ps;
  ps.types = program_types(program);
  ps.hash = hex64(fnv1a64(program.str())).substr(0, 12);
  std::vector<std::string> compute_args;
  for (size_t k = 0; k < program.inputs.size(); ++k) {
    ps.params.push_back(input_param(program, k));
    ps.args.push_back(fmt::format("in{}", k));
    ps.names.push_back(program.inputs[k].name);
    compute_args.push_back(fmt::format("dlc_to_float(in{}[{}])", k, input_at(layout, k)));
  }
  std::string stores;
  for (size_t k = 0; k < program.outputs.size(); ++k) {
    compute_args.push_back(fmt::format("r{}", k));
    if (k == 0) continue;
    const std::string t(cuda_type(program.outputs[k].dtype));
    ps.params.push_back(fmt::format("{}* __restrict__ out{}", t, k));
    ps.args.push_back(fmt::format("out{}", k));
    ps.names.push_back(program.outputs[k].name);
    stores += fmt::format("  out{}[i] = dlc_from_float<{}>(r{});\n", k, t, k);
  }
  std::vector<std::string> results;
  for (size_t k = 0; k < program.outputs.size(); ++k) results.push_back(fmt::format("r{}", k));
  const std::string helpers = used_op_helpers(program);
  ps.code = (helpers.empty() ? "" : "\n" + helpers) + compute_source(program, layout) +
            fmt::format(
                "// Output 0 of the program at element i (f32); outputs 1, … stored there.\n"
                "__device__ __forceinline__ float dlc_value({}, Index i) {{\n"
                "  float {};\n"
                "  dlc_compute({});\n"
                "{}"
                "  return r0;\n"
                "}}\n",
                fmt::join(ps.params, ", "), fmt::join(results, ", "), fmt::join(compute_args, ", "), stores);
  return ps;
}

}  // namespace dlc::codegen::cuda
