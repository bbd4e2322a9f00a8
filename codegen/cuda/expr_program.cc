// Expression programs of fused elementwise kernels (expr_program.h).
#include "codegen/cuda/expr_program.h"

#include <fmt/format.h>

#include "codegen/cuda/emit_util.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

struct OpInfo {
  ExprOp op;
  std::string_view name;
  int arity;
};

constexpr OpInfo kOps[] = {
#define DLC_EXPR_OP_INFO(name, arity) {ExprOp::name, #name, arity},
    DLC_EXPR_OPS(DLC_EXPR_OP_INFO)
#undef DLC_EXPR_OP_INFO
};

bool is_expr_storage(DType t) { return is_storage_float(t) || t == DType::Bool; }

bool broadcasts_to(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return false;
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1 && in[d] != out[lead + d]) return false;
  return true;
}

}  // namespace

std::string_view expr_op_name(ExprOp op) { return kOps[size_t(op)].name; }
int expr_op_arity(ExprOp op) { return kOps[size_t(op)].arity; }

std::optional<ExprOp> expr_op_from_name(std::string_view name) {
  for (const OpInfo& info : kOps)
    if (info.name == name && info.op != ExprOp::Input && info.op != ExprOp::Constant) return info.op;
  return std::nullopt;
}

int ExprProgram::input(std::string name, DType dtype, Shape input_dims) {
  inputs.push_back({std::move(name), dtype, std::move(input_dims)});
  ExprInstr in;
  in.op = ExprOp::Input;
  in.input = int(inputs.size()) - 1;
  instrs.push_back(in);
  return int(instrs.size()) - 1;
}

int ExprProgram::constant(double v) {
  ExprInstr c;
  c.op = ExprOp::Constant;
  c.value = v;
  instrs.push_back(c);
  return int(instrs.size()) - 1;
}

int ExprProgram::op(ExprOp o, std::vector<int> args) {
  ExprInstr i;
  i.op = o;
  i.args = std::move(args);
  instrs.push_back(std::move(i));
  return int(instrs.size()) - 1;
}

int ExprProgram::cast(int value, DType to) {
  const int v = op(ExprOp::Cast, {value});
  instrs.back().to = to;
  return v;
}

void ExprProgram::output(std::string name, int value, DType dtype) {
  outputs.push_back({std::move(name), value, dtype});
}

void ExprProgram::validate() const {
  for (int64_t d : dims)
    if (d < 0) throw Error(fmt::format("expression program: negative dimension in {}", shape_str(dims)));
  for (const ExprInput& in : inputs) {
    if (!is_expr_storage(in.dtype))
      throw Error(fmt::format("expression program: input '{}' has dtype {} (f32, f16, bf16, bool)", in.name,
                              dtype_name(in.dtype)));
    if (!broadcasts_to(in.dims, dims))
      throw Error(fmt::format("expression program: input '{}' {} does not broadcast to {}", in.name,
                              shape_str(in.dims), shape_str(dims)));
  }
  for (size_t k = 0; k < instrs.size(); ++k) {
    const ExprInstr& i = instrs[k];
    if (size_t(i.op) >= std::size(kOps)) throw Error(fmt::format("expression program: %{} has no op", k));
    const std::string_view name = expr_op_name(i.op);
    if (int(i.args.size()) != expr_op_arity(i.op))
      throw Error(fmt::format("expression program: %{} = {} has {} operands, needs {}", k, name,
                              i.args.size(), expr_op_arity(i.op)));
    for (int a : i.args)
      if (a < 0 || size_t(a) >= k)
        throw Error(
            fmt::format("expression program: %{} = {} uses %{}, which is not an earlier value", k, name, a));
    if (i.op == ExprOp::Input && (i.input < 0 || size_t(i.input) >= inputs.size()))
      throw Error(fmt::format("expression program: %{} loads input {} of {}", k, i.input, inputs.size()));
    if (i.op == ExprOp::Cast && !is_expr_storage(i.to))
      throw Error(
          fmt::format("expression program: %{} casts to {} (f32, f16, bf16, bool)", k, dtype_name(i.to)));
  }
  if (outputs.empty()) throw Error("expression program: no outputs");
  for (const ExprOutput& o : outputs) {
    if (o.value < 0 || size_t(o.value) >= instrs.size())
      throw Error(
          fmt::format("expression program: output '{}' is %{}, which is not a value", o.name, o.value));
    if (!is_expr_storage(o.dtype))
      throw Error(fmt::format("expression program: output '{}' has dtype {} (f32, f16, bf16, bool)", o.name,
                              dtype_name(o.dtype)));
  }
}

std::string ExprProgram::str() const {
  std::string s;
  for (size_t k = 0; k < instrs.size(); ++k) {
    const ExprInstr& i = instrs[k];
    s += fmt::format("%{} = ", k);
    if (i.op == ExprOp::Input) {
      const ExprInput& in = inputs.at(size_t(i.input));
      s += fmt::format("input {} {}{}", in.name, dtype_name(in.dtype), shape_str(in.dims));
    } else if (i.op == ExprOp::Constant) {
      s += fmt::format("constant {}", double_literal(i.value));
    } else {
      s += expr_op_name(i.op);
      for (size_t a = 0; a < i.args.size(); ++a) s += fmt::format("{}%{}", a ? ", " : " ", i.args[a]);
      if (i.op == ExprOp::Cast) s += fmt::format(" to {}", dtype_name(i.to));
    }
    s += "\n";
  }
  for (const ExprOutput& o : outputs)
    s += fmt::format("output {} = %{} {}{}\n", o.name, o.value, dtype_name(o.dtype), shape_str(dims));
  return s;
}

}  // namespace dlc::codegen::cuda
