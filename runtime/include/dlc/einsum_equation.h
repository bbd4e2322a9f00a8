// A canonical einsum equation ("ab,bc->ac": an explicit output, one letter per dim, no ellipsis,
// as the importer writes it) split into its operand terms and its output term. Shared by shape
// inference, the CPU kernel and the lower-einsum pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlc {

struct EinsumEquation {
  std::vector<std::string> terms;  // one per operand
  std::string output;
};

/// The equation's terms; nullopt when it has no explicit output ("->").
inline std::optional<EinsumEquation> parse_einsum_equation(std::string_view eq) {
  const size_t arrow = eq.find("->");
  if (arrow == std::string_view::npos) return std::nullopt;
  EinsumEquation e;
  e.output = std::string(eq.substr(arrow + 2));
  const std::string_view lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    e.terms.emplace_back(lhs.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return e;
}

}  // namespace dlc
