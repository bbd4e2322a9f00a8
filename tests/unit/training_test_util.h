// Helpers of the training unit tests: a small MLP classifier built as IR and compiled into a
// training plan with the passes `dlc train` runs (no ONNX file needed).
#pragma once

#include <memory>
#include <random>

#include "codegen/lower.h"
#include "ir/verifier.h"
#include "passes/autodiff.h"
#include "passes/dce.h"
#include "passes/loss.h"
#include "passes/optimizer.h"

namespace dlc::test {

inline Tensor random_normal(const Shape& shape, uint32_t seed, float scale = 1.f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, scale);
  Tensor t(TensorType{DType::F32, shape});
  for (int64_t i = 0; i < t.type.numel(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

/// x [batch, 5] -> MatMul 5x6 + bias -> Tanh -> MatMul 6x3 -> cross-entropy against "label",
/// with the optimizer's updates: the graph of a training plan.
inline std::unique_ptr<ir::Graph> mlp_training_graph(int64_t batch,
                                                     const passes::OptimizerOptions& optimizer) {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = g->add_input("x", TensorType{DType::F32, {batch, 5}});
  ir::Value* w1 = g->add_parameter("w1", random_normal({5, 6}, 1, 0.5f));
  ir::Value* b1 = g->add_parameter("b1", random_normal({6}, 2, 0.1f));
  ir::Value* w2 = g->add_parameter("w2", random_normal({6, 3}, 3, 0.5f));
  ir::Value* h = g->add_node(ir::OpKind::MatMul, {x, w1})->outputs[0];
  h = g->add_node(ir::OpKind::Add, {h, b1})->outputs[0];
  h = g->add_node(ir::OpKind::Tanh, {h})->outputs[0];
  g->add_output(g->add_node(ir::OpKind::MatMul, {h, w2})->outputs[0]);
  passes::Loss({"cross_entropy", "", "label"}).run(*g);
  passes::Autodiff().run(*g);
  passes::Optimizer(optimizer).run(*g);
  passes::DeadCodeElimination().run(*g);
  ir::verify(*g);
  return g;
}

/// The plan of mlp_training_graph with the TrainingInfo the trainer reads (no source model:
/// --export and --eval are unavailable).
inline plan::Plan mlp_training_plan(int64_t batch, const passes::OptimizerOptions& optimizer) {
  plan::Plan p = codegen::lower_to_plan(*mlp_training_graph(batch, optimizer));
  plan::TrainingInfo* info = p.mutable_training();
  info->set_source_name("mlp");
  info->set_batch(batch);
  info->set_micro_steps(optimizer.accumulate);
  info->set_label("label");
  info->set_device("cpu");
  return p;
}

}  // namespace dlc::test
