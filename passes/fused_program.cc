// The expression program of a fused node (fused_program.h).
#include "passes/fused_program.h"

namespace dlc::passes {

ExprProgram program_of(const ir::Node& n) {
  std::vector<ExprInput> inputs;
  for (const ir::Value* v : n.inputs) inputs.push_back({v->name, v->type.dtype, v->type.shape});
  std::vector<std::string> names;
  for (const ir::Value* v : n.outputs) names.push_back(v->name);
  return parse_expr_program(n.attrs.s("program"), std::move(inputs), names);
}

}  // namespace dlc::passes
