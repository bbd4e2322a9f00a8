// Expression programs of fused elementwise kernels (dlc/expr_program.h): building, validation,
// the listing and the attribute form with its parser.
#include "dlc/expr_program.h"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <tuple>

#include "dlc/error.h"

namespace dlc {

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

bool broadcasts_to(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return false;
  const size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1 && in[d] != out[lead + d]) return false;
  return true;
}

// Numpy broadcasting of every input's dims; throws on a mismatch.
Shape broadcast_all(const std::vector<ExprInput>& inputs) {
  Shape out;
  for (const ExprInput& in : inputs) {
    if (in.dims.size() > out.size()) out.insert(out.begin(), in.dims.size() - out.size(), 1);
    const size_t lead = out.size() - in.dims.size();
    for (size_t d = 0; d < in.dims.size(); ++d) {
      int64_t& o = out[lead + d];
      if (o == 1)
        o = in.dims[d];
      else if (in.dims[d] != 1 && in.dims[d] != o)
        throw Error(fmt::format("expression program: input '{}' {} does not broadcast with {}", in.name,
                                shape_str(in.dims), shape_str(out)));
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Words of one instruction: split at spaces and commas.
std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ' || s[i] == ',') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != ',') ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

[[noreturn]] void bad_item(std::string_view item, std::string_view why) {
  throw Error(fmt::format("expression program: bad instruction '{}': {}", item, why));
}

// "%12" -> 12; "12" -> 12 when `percent` is false.
int parse_index(std::string_view item, std::string_view w, bool percent) {
  if (percent) {
    if (w.empty() || w[0] != '%') bad_item(item, fmt::format("expected a value '%N', got '{}'", w));
    w.remove_prefix(1);
  }
  if (w.empty() || w.size() > 9) bad_item(item, fmt::format("bad index '{}'", w));
  int v = 0;
  for (char c : w) {
    if (c < '0' || c > '9') bad_item(item, fmt::format("bad index '{}'", w));
    v = v * 10 + (c - '0');
  }
  return v;
}

DType parse_storage_dtype(std::string_view item, std::string_view w) {
  std::optional<DType> t = parse_dtype(w);
  if (!t) bad_item(item, fmt::format("unknown dtype '{}'", w));
  return *t;
}

}  // namespace

std::string_view expr_op_name(ExprOp op) { return kOps[size_t(op)].name; }
int expr_op_arity(ExprOp op) { return kOps[size_t(op)].arity; }
bool is_expr_storage(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::Bool;
}

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

ExprProgram ExprProgram::deduplicated() const {
  ExprProgram p(dims);
  p.inputs = inputs;
  std::vector<int> moved(instrs.size());  // old value -> new value
  std::map<std::tuple<ExprOp, std::vector<int>, int, uint64_t, DType>, int> first;
  for (size_t k = 0; k < instrs.size(); ++k) {
    ExprInstr in = instrs[k];
    for (int& a : in.args) a = moved[size_t(a)];
    const auto key = std::make_tuple(in.op, in.args, in.input, std::bit_cast<uint64_t>(in.value), in.to);
    const auto [it, fresh] = first.emplace(key, int(p.instrs.size()));
    if (fresh) p.instrs.push_back(std::move(in));
    moved[k] = it->second;
  }
  for (ExprOutput o : outputs) {
    o.value = moved[size_t(o.value)];
    p.outputs.push_back(std::move(o));
  }
  return p;
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
      s += fmt::format("constant {}", i.value);
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

std::string ExprProgram::body() const {
  std::vector<std::string> items;
  for (size_t k = 0; k < instrs.size(); ++k) {
    const ExprInstr& i = instrs[k];
    std::string s = fmt::format("%{} = ", k);
    if (i.op == ExprOp::Input) {
      s += fmt::format("input {}", i.input);
    } else if (i.op == ExprOp::Constant) {
      s += fmt::format("constant {}", i.value);  // the shortest text that reads back exactly
    } else {
      s += expr_op_name(i.op);
      for (size_t a = 0; a < i.args.size(); ++a) s += fmt::format("{}%{}", a ? ", " : " ", i.args[a]);
      if (i.op == ExprOp::Cast) s += fmt::format(" to {}", dtype_name(i.to));
    }
    items.push_back(std::move(s));
  }
  for (const ExprOutput& o : outputs)
    items.push_back(fmt::format("output %{} {}", o.value, dtype_name(o.dtype)));
  return fmt::format("{}", fmt::join(items, "; "));
}

ExprProgram parse_expr_program(std::string_view body, std::vector<ExprInput> inputs,
                               const std::vector<std::string>& output_names) {
  ExprProgram p(broadcast_all(inputs));
  p.inputs = std::move(inputs);
  size_t pos = 0;
  while (pos <= body.size()) {
    const size_t semi = std::min(body.find(';', pos), body.size());
    const std::string_view item = trim(body.substr(pos, semi - pos));
    pos = semi + 1;
    const std::vector<std::string_view> w = words(item);
    if (w.empty()) bad_item(item, "empty");
    if (w[0] == "output") {
      if (w.size() != 3) bad_item(item, "expected 'output %N DTYPE'");
      if (p.outputs.size() >= output_names.size())
        throw Error(
            fmt::format("expression program: more outputs than the {} operands", output_names.size()));
      p.output(output_names[p.outputs.size()], parse_index(item, w[1], true),
               parse_storage_dtype(item, w[2]));
      continue;
    }
    if (!p.outputs.empty()) bad_item(item, "instructions must come before the outputs");
    if (w.size() < 3 || w[1] != "=") bad_item(item, "expected '%N = OP OPERANDS'");
    if (parse_index(item, w[0], true) != int(p.instrs.size()))
      bad_item(item, fmt::format("expected %{} (values are numbered in order)", p.instrs.size()));
    if (w[2] == "input") {
      if (w.size() != 4) bad_item(item, "expected '%N = input INDEX'");
      ExprInstr in;
      in.op = ExprOp::Input;
      in.input = parse_index(item, w[3], false);
      p.instrs.push_back(in);
    } else if (w[2] == "constant") {
      if (w.size() != 4) bad_item(item, "expected '%N = constant NUMBER'");
      const std::string text(w[3]);
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size()) bad_item(item, fmt::format("bad number '{}'", text));
      p.constant(v);
    } else {
      const std::optional<ExprOp> op = expr_op_from_name(w[2]);
      if (!op) bad_item(item, fmt::format("unknown op '{}'", w[2]));
      size_t end = w.size();
      DType to = DType::F32;
      if (*op == ExprOp::Cast) {
        if (w.size() < 5 || w[w.size() - 2] != "to") bad_item(item, "expected '%N = Cast %A to DTYPE'");
        to = parse_storage_dtype(item, w.back());
        end -= 2;
      }
      std::vector<int> args;
      for (size_t a = 3; a < end; ++a) args.push_back(parse_index(item, w[a], true));
      p.op(*op, std::move(args));
      p.instrs.back().to = to;
    }
  }
  if (p.outputs.size() != output_names.size())
    throw Error(
        fmt::format("expression program: {} outputs for {} operands", p.outputs.size(), output_names.size()));
  p.validate();
  return p;
}

}  // namespace dlc
