// Shape inference of the ops the fusion pass makes: a FusedElementwise's result types come from
// its program, parsed against the operand types (a FusedReduce's: that, reduced); a MultiTensorUpdate's, per
// tensor, from the inference of the single-tensor update it stands for.
#include "dlc/error.h"
#include "dlc/expr_program.h"
#include "dlc/multi_tensor_update.h"
#include "ir/infer.h"

namespace dlc::ir {

namespace {

// The node's program, parsed against its operand types.
ExprProgram program_of(InferContext& ctx) {
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
  return p;
}

}  // namespace

void infer_FusedElementwise(InferContext& ctx) {
  const ExprProgram p = program_of(ctx);
  for (size_t i = 0; i < p.outputs.size(); ++i) ctx.outputs[i] = TensorType{p.outputs[i].dtype, p.dims};
}

// The program's f32 output 0 reduced over `axes` (adjacent; empty = all) as ReduceSum / ReduceMean;
// its other outputs as FusedElementwise's.
void infer_FusedReduce(InferContext& ctx) {
  const ExprProgram p = program_of(ctx);
  const std::string reduce = ctx.attrs().s("reduce", "");
  if (reduce != "ReduceSum" && reduce != "ReduceMean")
    ctx.fail("reduce '{}' is not ReduceSum or ReduceMean", reduce);
  if (p.outputs[0].dtype != DType::F32)
    ctx.fail("the program's output 0 is {}, not f32", dtype_name(p.outputs[0].dtype));
  const std::vector<int64_t> axes = ctx.attrs().ints("axes", {});
  const int64_t rank = int64_t(p.dims.size());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= rank || (i > 0 && axes[i] != axes[i - 1] + 1))
      ctx.fail("axes must be adjacent, increasing and within rank {}", rank);
  const bool keepdims = ctx.attrs().i("keepdims", 1) != 0;
  ctx.outputs[0] = TensorType{DType::F32, reduced_shape(p.dims, axes, keepdims)};
  for (size_t i = 1; i < p.outputs.size(); ++i) ctx.outputs[i] = TensorType{p.outputs[i].dtype, p.dims};
}

void infer_MultiTensorUpdate(InferContext& ctx) {
  const std::string update = ctx.attrs().s("update", "");
  const MultiTensorLayout* layout = find_multi_tensor_layout(update);
  const std::optional<OpKind> single = parse_op(update);
  if (!layout || !single) ctx.fail("update '{}' is not SgdUpdate, AdamUpdate or RmspropUpdate", update);
  const int tensors = layout->tensors(ctx.num_inputs(), ctx.num_outputs());
  if (tensors < 1)
    ctx.fail("{} operands and {} results do not fit {} scalar(s) and {} operands and {} results per tensor",
             ctx.num_inputs(), ctx.num_outputs(), layout->num_scalars(), layout->tensor_inputs(),
             layout->outputs);
  for (int k = 0; k < tensors; ++k) {
    Node one{*single, fmt::format("{}[{}]", ctx.node.name, k), {}, {}, ctx.attrs()};
    for (int i = 0; i < layout->inputs; ++i)
      one.inputs.push_back(ctx.node.inputs[size_t(layout->merged_input(k, i))]);
    const std::vector<TensorType> types = infer_types(one, layout->outputs);
    for (int j = 0; j < layout->outputs; ++j)
      ctx.outputs[size_t(layout->merged_output(k, j))] = types[size_t(j)];
  }
}

}  // namespace dlc::ir
