// The arity table over the op table's X-macro list.
#include "runtime/plan/step_arity.h"

#include <utility>

namespace dlc::plan {

namespace {
const std::pair<std::string_view, StepArity> kArity[] = {
#define DLC_OP(name, min_in, max_in, min_out, max_out) {#name, {min_in, max_in, min_out, max_out}},
#include "ir/ops.def"
#undef DLC_OP
};
}  // namespace

std::optional<StepArity> step_arity(std::string_view kernel) {
  for (const auto& [name, arity] : kArity)
    if (name == kernel) return arity;
  return std::nullopt;
}

}  // namespace dlc::plan
