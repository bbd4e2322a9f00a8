// Canonicalization on graphs the textual IR cannot express (state updates), and its statistics;
// the rewrites themselves are golden-tested in tests/passes/canonicalize.dlir.
#include "passes/canonicalize.h"

#include <gtest/gtest.h>

namespace dlc::passes {
namespace {

TEST(Canonicalize, KeepsTheValuesOfStateUpdates) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2}});
  ir::Value* s = g.add_parameter("s", Tensor(TensorType{DType::F32, {2}}), ir::Role::State);
  ir::Node* copy = g.add_node(ir::OpKind::Identity, {x}, {}, {"s_next"}, "copy");
  g.add_state_update(copy->outputs[0], s);
  ir::Node* relu = g.add_node(ir::OpKind::Relu, {s}, {}, {"y"}, "relu");
  g.set_outputs({relu->outputs[0]});
  Canonicalize pass;
  EXPECT_FALSE(pass.run(g));
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.state_updates().at(0).first, copy->outputs[0]);
}

TEST(Canonicalize, CountsFoldedAndMergedNodes) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 3}});
  ir::Value* one = g.add_constant("one", Tensor::scalar_f32(1.0f));
  ir::Node* scaled = g.add_node(ir::OpKind::Mul, {x, one}, {}, {"scaled"}, "scale");
  Attrs flat, back;
  flat.set("shape", Shape{6});
  back.set("shape", Shape{3, 2});
  ir::Node* r1 = g.add_node(ir::OpKind::Reshape, {scaled->outputs[0]}, flat, {"r1"}, "r1");
  ir::Node* r2 = g.add_node(ir::OpKind::Reshape, {r1->outputs[0]}, back, {"r2"}, "r2");
  g.set_outputs({r2->outputs[0]});
  Canonicalize pass;
  EXPECT_TRUE(pass.run(g));
  EXPECT_EQ(pass.stats().at("nodes_folded"), 1);
  EXPECT_EQ(pass.stats().at("nodes_merged"), 1);
  EXPECT_EQ(r2->inputs[0], x);
  EXPECT_EQ(r2->outputs[0]->name, "r2");
}

}  // namespace
}  // namespace dlc::passes
