// Gradient accumulation over micro-batches, gated by the "apply" input.
#include "passes/grad_accumulation.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::passes {

GradientAccumulator::GradientAccumulator(ir::Graph& graph, int64_t micro_steps, const char* apply_name)
    : graph_(graph), micro_steps_(micro_steps) {
  if (micro_steps < 1) throw Error(fmt::format("--accumulate must be at least 1, got {}", micro_steps));
  if (micro_steps == 1) return;
  if (graph.find_value(apply_name))
    throw Error(
        fmt::format("optimizer: the model already has a value named '{}', which dlc reserves", apply_name));
  apply_ = graph.add_input(apply_name, TensorType{DType::Bool, {}});
  update_gate_ = apply_;
  inverse_micro_steps_ = graph.add_constant(graph.unique_value_name("accumulate.inverse_micro_steps"),
                                            Tensor::scalar_f32(float(1.0 / double(micro_steps))));
  zero_ = graph.add_constant(graph.unique_value_name("accumulate.zero"), Tensor::scalar_f32(0.f));
}

ir::Value* GradientAccumulator::accumulate(ir::Value* param, ir::Value* grad) {
  return accumulate(param->name, grad);
}

ir::Value* GradientAccumulator::accumulate(const std::string& name, ir::Value* grad) {
  if (!apply_) return grad;
  ir::Value* buffer = graph_.add_parameter(graph_.unique_value_name(name + ".grad_accum"), Tensor(grad->type),
                                           ir::Role::State);
  const std::string node = name + ".accumulate";
  ir::Value* scaled = graph_
                          .add_node(ir::OpKind::Mul, {grad, inverse_micro_steps_}, {},
                                    {graph_.unique_value_name(grad->name + ".scaled")}, node)
                          ->outputs[0];
  ir::Value* sum = graph_
                       .add_node(ir::OpKind::Add, {buffer, scaled}, {},
                                 {graph_.unique_value_name(name + ".grad_sum")}, node)
                       ->outputs[0];
  // After an applied step the buffer restarts from zero; otherwise it keeps the running sum.
  ir::Value* next = graph_
                        .add_node(ir::OpKind::Where, {apply_, zero_, sum}, {},
                                  {graph_.unique_value_name(buffer->name + ".next")}, node)
                        ->outputs[0];
  graph_.add_state_update(next, buffer);
  return sum;
}

void GradientAccumulator::update_state(ir::Value* new_value, ir::Value* state) {
  graph_.add_state_update(new_value, state);
}

void GradientAccumulator::skip_unless(ir::Value* condition) {
  update_gate_ = update_gate_ ? graph_
                                    .add_node(ir::OpKind::And, {update_gate_, condition}, {},
                                              {graph_.unique_value_name("update_gate")}, "update_gate")
                                    ->outputs[0]
                              : condition;
}

void GradientAccumulator::update_state_every_step(ir::Value* new_value, ir::Value* state) {
  graph_.add_state_update(apply_ ? gated(apply_, new_value, state) : new_value, state);
}

ir::Value* GradientAccumulator::gated(ir::Value* condition, ir::Value* applied, ir::Value* kept) {
  return graph_
      .add_node(ir::OpKind::Where, {condition, applied, kept}, {},
                {graph_.unique_value_name(applied->name + ".gated")}, kept->name + ".gate")
      ->outputs[0];
}

}  // namespace dlc::passes
