// Expression programs of the activations with attributes (activation_programs.h).
#include "codegen/cuda/activation_programs.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <string>

#include "dlc/error.h"

namespace dlc::codegen::cuda {

namespace {

// Builds an activation from its operands and attributes (read with their ONNX defaults).
using Build = std::function<int(ExprProgram& p, const std::vector<int>& in, const Attrs& attrs)>;

int op(ExprProgram& p, ExprOp o, std::vector<int> args) { return p.op(o, std::move(args)); }

// x < 0 ? slope * x : x (NaN passes: NaN < 0 is false), as LeakyRelu and PRelu compute.
int leaky(ExprProgram& p, int x, int slope) {
  return op(p, ExprOp::Where, {op(p, ExprOp::Less, {x, p.constant(0.0)}), op(p, ExprOp::Mul, {slope, x}), x});
}

const std::map<std::string, Build, std::less<>>& builders() {
  static const std::map<std::string, Build, std::less<>> table = {
      {"LeakyRelu", [](ExprProgram& p, const std::vector<int>& in,
                       const Attrs& a) { return leaky(p, in[0], p.constant(a.f("alpha", 0.01))); }},
      {"PRelu",
       [](ExprProgram& p, const std::vector<int>& in, const Attrs&) { return leaky(p, in[0], in[1]); }},
      {"ThresholdedRelu",  // x > alpha ? x : 0
       [](ExprProgram& p, const std::vector<int>& in, const Attrs& a) {
         const int x = in[0];
         return op(p, ExprOp::Where,
                   {op(p, ExprOp::Greater, {x, p.constant(a.f("alpha", 1.0))}), x, p.constant(0.0)});
       }},
      {"HardSigmoid",  // max(0, min(1, alpha x + beta)), NaN propagating
       [](ExprProgram& p, const std::vector<int>& in, const Attrs& a) {
         const int v =
             op(p, ExprOp::Add,
                {op(p, ExprOp::Mul, {p.constant(a.f("alpha", 0.2)), in[0]}), p.constant(a.f("beta", 0.5))});
         return op(p, ExprOp::Max, {p.constant(0.0), op(p, ExprOp::Min, {p.constant(1.0), v})});
       }},
      {"HardSwish",  // x max(0, min(1, x / 6 + 0.5))
       [](ExprProgram& p, const std::vector<int>& in, const Attrs&) {
         const int x = in[0];
         const int v = op(p, ExprOp::Add, {op(p, ExprOp::Div, {x, p.constant(6.0)}), p.constant(0.5)});
         return op(p, ExprOp::Mul,
                   {x, op(p, ExprOp::Max, {p.constant(0.0), op(p, ExprOp::Min, {p.constant(1.0), v})})});
       }},
      {"Elu",  // x < 0 ? alpha expm1(x) : x
       [](ExprProgram& p, const std::vector<int>& in, const Attrs& a) {
         const int x = in[0];
         return op(p, ExprOp::Where,
                   {op(p, ExprOp::Less, {x, p.constant(0.0)}),
                    op(p, ExprOp::Mul, {p.constant(a.f("alpha", 1.0)), op(p, ExprOp::Expm1, {x})}), x});
       }},
      {"Selu",  // gamma (x > 0 ? x : alpha expm1(x))
       [](ExprProgram& p, const std::vector<int>& in, const Attrs& a) {
         const int x = in[0];
         const int neg = op(p, ExprOp::Mul,
                            {p.constant(a.f("alpha", 1.67326319217681884765625)), op(p, ExprOp::Expm1, {x})});
         return op(p, ExprOp::Mul,
                   {p.constant(a.f("gamma", 1.05070102214813232421875)),
                    op(p, ExprOp::Where, {op(p, ExprOp::Greater, {x, p.constant(0.0)}), x, neg})});
       }},
      {"Celu",  // max(0, x) + min(0, alpha expm1(x / alpha)), NaN propagating
       [](ExprProgram& p, const std::vector<int>& in, const Attrs& a) {
         const int x = in[0], alpha = p.constant(a.f("alpha", 1.0));
         const int e = op(p, ExprOp::Mul, {alpha, op(p, ExprOp::Expm1, {op(p, ExprOp::Div, {x, alpha})})});
         return op(p, ExprOp::Add,
                   {op(p, ExprOp::Max, {p.constant(0.0), x}), op(p, ExprOp::Min, {p.constant(0.0), e})});
       }},
      {"Mod",  // r = fmod(a, b); without fmod, r + b where r is nonzero and its sign is not b's
       [](ExprProgram& p, const std::vector<int>& in, const Attrs& a) {
         const int r = op(p, ExprOp::Fmod, {in[0], in[1]});
         if (a.i("fmod", 0) != 0) return r;
         const int zero = p.constant(0.0);
         const int signs_differ =
             op(p, ExprOp::Xor, {op(p, ExprOp::Less, {r, zero}), op(p, ExprOp::Less, {in[1], zero})});
         const int adjust =
             op(p, ExprOp::And, {op(p, ExprOp::Not, {op(p, ExprOp::Equal, {r, zero})}), signs_differ});
         return op(p, ExprOp::Where, {adjust, op(p, ExprOp::Add, {r, in[1]}), r});
       }},
      {"Mish",  // x tanh(softplus(x))
       [](ExprProgram& p, const std::vector<int>& in, const Attrs&) {
         return op(p, ExprOp::Mul, {in[0], op(p, ExprOp::Tanh, {op(p, ExprOp::Softplus, {in[0]})})});
       }},
  };
  return table;
}

}  // namespace

bool is_activation_with_attributes(std::string_view name) { return builders().count(name) > 0; }

int activation_expr(ExprProgram& p, std::string_view name, const Attrs& attrs,
                    const std::vector<int>& operands) {
  const auto it = builders().find(name);
  if (it == builders().end()) throw Error(fmt::format("{} is no activation with attributes", name));
  const size_t arity = name == "PRelu" || name == "Mod" ? 2 : 1;
  if (operands.size() != arity)
    throw Error(fmt::format("{} takes {} operand(s), got {}", name, arity, operands.size()));
  return it->second(p, operands, attrs);
}

}  // namespace dlc::codegen::cuda
