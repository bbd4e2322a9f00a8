// Lower Einsum (lower_einsum.h).
#include "passes/lower_einsum.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "dlc/einsum_equation.h"
#include "dlc/error.h"

namespace dlc::passes {

namespace {

using ir::OpKind;

// An operand and the letter of each of its dims.
struct Term {
  ir::Value* value;
  std::string letters;
};

bool has(const std::string& letters, char c) { return letters.find(c) != std::string::npos; }

// The nodes lowering one Einsum emits, named after it, before it.
class Lowering {
 public:
  Lowering(ir::Graph& g, const ir::Node& einsum, std::map<char, int64_t> sizes)
      : g_(g), name_(einsum.name), sizes_(std::move(sizes)) {}

  // `t` with the letters not in `keep` summed away.
  Term summed(const Term& t, const std::string& keep) {
    Shape axes;
    std::string rest;
    for (size_t k = 0; k < t.letters.size(); ++k) {
      if (has(keep, t.letters[k]))
        rest += t.letters[k];
      else
        axes.push_back(int64_t(k));
    }
    if (axes.empty()) return t;
    Attrs a;
    a.set("axes", axes);
    a.set("keepdims", int64_t(0));
    return {emit(OpKind::ReduceSum, {t.value}, a, "sum"), rest};
  }

  // `t` with its dims in the order of `order` (a permutation of its letters).
  Term permuted(const Term& t, const std::string& order) {
    if (t.letters == order) return t;
    Shape perm;
    for (char c : order) perm.push_back(int64_t(t.letters.find(c)));
    Attrs a;
    a.set("perm", perm);
    return {emit(OpKind::Transpose, {t.value}, a, "transpose"), order};
  }

  // a and b contracted into the letters in either that `needed` names (see lower_einsum.h).
  Term contracted(const Term& a, const Term& b, const std::string& needed) {
    std::string batch, shared, a_only, b_only;
    for (char c : a.letters) (has(b.letters, c) ? has(needed, c) ? batch : shared : a_only) += c;
    for (char c : b.letters)
      if (!has(a.letters, c)) b_only += c;
    const Term pa = permuted(a, batch + a_only + shared), pb = permuted(b, batch + shared + b_only);
    Shape lhs = dims(batch), rhs = dims(batch);
    lhs.insert(lhs.end(), {product(a_only), product(shared)});
    rhs.insert(rhs.end(), {product(shared), product(b_only)});
    ir::Value* mm = emit(OpKind::MatMul, {reshaped(pa.value, lhs), reshaped(pb.value, rhs)}, {}, "matmul");
    const std::string letters = batch + a_only + b_only;
    return {reshaped(mm, dims(letters)), letters};
  }

  // `t` with its repeated letters' diagonals taken: times an identity mask over each repeated pair,
  // summed over the pair's second axis.
  Term diagonals(Term t) {
    for (size_t p = 0; p < t.letters.size(); ++p) {
      const size_t q = t.letters.find(t.letters[p], p + 1);
      if (q == std::string::npos) continue;
      const int64_t n = sizes_.at(t.letters[p]);
      Shape mask_shape(t.letters.size(), 1);
      mask_shape[p] = mask_shape[q] = n;
      std::vector<double> eye(size_t(n * n), 0.0);
      for (int64_t k = 0; k < n; ++k) eye[size_t(k * n + k)] = 1.0;
      ir::Value* mask = g_.add_constant(g_.unique_value_name(name_ + ".diagonal_mask"),
                                        Tensor::from_double(t.value->type.dtype, eye, mask_shape));
      ir::Value* masked = emit(OpKind::Mul, {t.value, mask}, {}, "masked");
      Attrs a;
      a.set("axes", Shape{int64_t(q)});
      a.set("keepdims", int64_t(0));
      t = {emit(OpKind::ReduceSum, {masked}, a, "diagonal"),
           t.letters.substr(0, q) + t.letters.substr(q + 1)};
      p = size_t(-1);  // again from the start: a letter may repeat more than twice
    }
    return t;
  }

  // `v` itself when it is not an operand of the Einsum, else a copy to rename.
  ir::Value* own(ir::Value* v, const std::vector<ir::Value*>& operands) {
    if (std::find(operands.begin(), operands.end(), v) == operands.end()) return v;
    return emit(OpKind::Identity, {v}, {}, "copy");
  }

 private:
  // Node `op` of `inputs`, named NAME.what, its result too.
  ir::Value* emit(OpKind op, std::vector<ir::Value*> inputs, const Attrs& a, const std::string& what) {
    const std::string name = name_ + "." + what;
    return g_.add_node(op, std::move(inputs), a, {g_.unique_value_name(name)}, name)->outputs[0];
  }

  ir::Value* reshaped(ir::Value* v, const Shape& shape) {
    if (v->type.shape == shape) return v;
    Attrs a;
    a.set("shape", shape);
    return emit(OpKind::Reshape, {v}, a, "reshape");
  }

  Shape dims(const std::string& letters) const {
    Shape d;
    for (char c : letters) d.push_back(sizes_.at(c));
    return d;
  }
  int64_t product(const std::string& letters) const { return num_elements(dims(letters)); }

  ir::Graph& g_;
  std::string name_;
  std::map<char, int64_t> sizes_;
};

// A letter no term uses, for a broadcast dim.
char unused_letter(const std::map<char, int64_t>& sizes) {
  for (char c : std::string_view("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    if (!sizes.count(c)) return c;
  throw Error("lower-einsum: no letter left for a broadcast dim");
}

// Each letter's size (the largest any operand gives it), with the terms rewritten so that a
// size-1 dim broadcast against a larger size of its letter is a letter of its own (summed away
// with its operand's other unshared letters, which is the broadcast product's value); nullopt
// where the Einsum is left alone (integers, a malformed equation).
std::optional<std::map<char, int64_t>> letter_sizes(const ir::Node& n, EinsumEquation& eq) {
  if (eq.terms.size() != n.inputs.size() || !is_floating(n.outputs[0]->type.dtype)) return std::nullopt;
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < eq.terms.size(); ++i) {
    if (eq.terms[i].size() != n.inputs[i]->type.shape.size()) return std::nullopt;
    for (size_t k = 0; k < eq.terms[i].size(); ++k) {
      int64_t& size = sizes[eq.terms[i][k]];
      size = std::max(size, n.inputs[i]->type.shape[k]);
    }
  }
  for (size_t i = 0; i < eq.terms.size(); ++i)
    for (size_t k = 0; k < eq.terms[i].size(); ++k)
      if (n.inputs[i]->type.shape[k] == 1 && sizes.at(eq.terms[i][k]) != 1) {
        const char fresh = unused_letter(sizes);
        sizes[fresh] = 1;
        eq.terms[i][k] = fresh;
      }
  return sizes;
}

bool lower(ir::Graph& g, ir::Node* n) {
  std::optional<EinsumEquation> eq = parse_einsum_equation(n->attrs.s("equation", ""));
  if (!eq) return false;
  std::optional<std::map<char, int64_t>> sizes = letter_sizes(*n, *eq);
  if (!sizes) return false;
  // The letters used after operand i: the output's and the later terms'.
  std::vector<std::string> needed_after(eq->terms.size(), eq->output);
  for (size_t i = eq->terms.size() - 1; i > 0; --i) needed_after[i - 1] = needed_after[i] + eq->terms[i];
  g.set_insertion_point(n);
  Lowering l(g, *n, std::move(*sizes));
  Term acc{nullptr, ""};
  for (size_t i = 0; i < eq->terms.size(); ++i) {
    std::string others = eq->output;  // the letters that keep operand i's dims from being summed
    for (size_t j = 0; j < eq->terms.size(); ++j)
      if (j != i) others += eq->terms[j];
    const Term t = l.summed(l.diagonals({n->inputs[i], eq->terms[i]}), others);
    acc = i == 0 ? t : l.contracted(acc, t, needed_after[i]);
  }
  ir::Value* result = l.own(l.permuted(acc, eq->output).value, n->inputs);
  g.clear_insertion_point();
  g.replace_node(n, {result});
  return true;
}

}  // namespace

bool LowerEinsum::run(ir::Graph& g) {
  int64_t lowered = 0, kept = 0;
  for (ir::Node* n : g.nodes())
    if (n->op == OpKind::Einsum) lower(g, n) ? ++lowered : ++kept;
  stats_["einsums_lowered"] = lowered;
  stats_["einsums_kept"] = kept;
  return lowered > 0;
}

}  // namespace dlc::passes
