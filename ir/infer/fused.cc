// Shape inference of the ops the fusion pass makes: a FusedElementwise's result types come from
// its program, parsed against the operand types.
#include "dlc/error.h"
#include "dlc/expr_program.h"
#include "ir/infer.h"

namespace dlc::ir {

void infer_FusedElementwise(InferContext& ctx) {
  std::vector<ExprInput> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    inputs.push_back(
        {ctx.node.inputs[i] ? ctx.node.inputs[i]->name : "", ctx.input(i).dtype, ctx.input(i).shape});
  std::vector<std::string> names;
  for (int i = 0; i < ctx.num_outputs(); ++i) names.push_back(fmt::format("output {}", i));
  ExprProgram p;
  try {
    p = parse_expr_program(ctx.attrs().s("program"), std::move(inputs), names);
  } catch (const Error& e) {
    ctx.fail_message(e.what());
  }
  for (size_t i = 0; i < p.outputs.size(); ++i) ctx.outputs[i] = TensorType{p.outputs[i].dtype, p.dims};
}

}  // namespace dlc::ir
