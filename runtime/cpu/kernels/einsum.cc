// CPU Einsum over a canonical equation ("ab,bc->ac": explicit output, one letter per dim, no
// ellipsis, as the importer writes it). Repeated letters in a term take diagonals; letters
// missing from the output are summed. A direct loop: correctness first.
#include <map>
#include <string_view>

#include "dlc/einsum_equation.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/onednn.h"

namespace dlc::cpu {

namespace {

// Per-letter sizes and, per operand, the element stride of each letter (0 where absent or
// broadcast; summed for a repeated letter, which walks the diagonal).
struct EinsumPlan {
  Shape out_sizes, sum_sizes;
  std::vector<Shape> out_strides, sum_strides;  // [operand][letter]
};

EinsumPlan plan_einsum(const KernelContext& ctx) {
  const std::string eq = ctx.attrs.s("equation");
  const std::optional<EinsumEquation> parsed = parse_einsum_equation(eq);
  if (!parsed) ctx.fail("equation '{}' has no explicit output", eq);
  const std::string_view out = parsed->output;
  const std::vector<std::string>& terms = parsed->terms;
  if (terms.size() != ctx.inputs.size())
    ctx.fail("equation '{}' does not match {} operands", eq, ctx.inputs.size());
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (terms[i].size() != ctx.inputs[i].dims.size())
      ctx.fail("term '{}' does not match operand {}", terms[i], i);
    for (size_t k = 0; k < terms[i].size(); ++k)
      size[terms[i][k]] = std::max(size[terms[i][k]], ctx.inputs[i].dims[k]);
  }
  std::string sum_letters;
  for (const auto& [c, n] : size)
    if (out.find(c) == std::string_view::npos) sum_letters += c;
  EinsumPlan p;
  auto strides_of = [&](std::string_view letters, std::vector<Shape>* dst) {
    for (size_t i = 0; i < terms.size(); ++i) {
      const Shape st = onednn::row_major_strides(ctx.inputs[i].dims);
      Shape& s = dst->emplace_back(letters.size(), 0);
      for (size_t l = 0; l < letters.size(); ++l)
        for (size_t k = 0; k < terms[i].size(); ++k)
          if (terms[i][k] == letters[l] && ctx.inputs[i].dims[k] != 1) s[l] += st[k];
    }
  };
  for (char c : out) p.out_sizes.push_back(size.at(c));
  for (char c : sum_letters) p.sum_sizes.push_back(size.at(c));
  strides_of(out, &p.out_strides);
  strides_of(sum_letters, &p.sum_strides);
  return p;
}

template <typename T>
void einsum_loop(const KernelContext& ctx, const EinsumPlan& p) {
  const size_t n_ops = ctx.inputs.size();
  const int64_t out_n = num_elements(p.out_sizes), sum_n = num_elements(p.sum_sizes);
  T* y = ctx.outputs[0].as<T>();
#pragma omp parallel for schedule(static) if (out_n * sum_n > 32768)
  for (int64_t o = 0; o < out_n; ++o) {
    std::vector<int64_t> base(n_ops, 0), off(n_ops);
    for (int64_t l = int64_t(p.out_sizes.size()) - 1, rem = o; l >= 0; --l) {
      const int64_t idx = rem % p.out_sizes[l];
      rem /= p.out_sizes[l];
      for (size_t i = 0; i < n_ops; ++i) base[i] += idx * p.out_strides[i][l];
    }
    T acc = T(0);
    for (int64_t s = 0; s < sum_n; ++s) {
      off = base;
      for (int64_t l = int64_t(p.sum_sizes.size()) - 1, rem = s; l >= 0; --l) {
        const int64_t idx = rem % p.sum_sizes[l];
        rem /= p.sum_sizes[l];
        for (size_t i = 0; i < n_ops; ++i) off[i] += idx * p.sum_strides[i][l];
      }
      T prod = T(1);
      for (size_t i = 0; i < n_ops; ++i) prod *= ctx.inputs[i].as<T>()[off[i]];
      acc += prod;
    }
    y[o] = acc;
  }
}

}  // namespace

void kernel_Einsum(const KernelContext& ctx) {
  const EinsumPlan p = plan_einsum(ctx);
  if (num_elements(p.out_sizes) != ctx.outputs[0].numel())
    ctx.fail("equation '{}' does not give the output {}", ctx.attrs.s("equation"),
             shape_str(ctx.outputs[0].dims));
  dispatch_numeric(ctx.inputs[0].dtype, ctx,
                   [&](auto tag) { einsum_loop<typename decltype(tag)::type>(ctx, p); });
}

}  // namespace dlc::cpu
