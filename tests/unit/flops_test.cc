// Operation counts: 2 per multiply-add for GEMM and convolution, 1 per output element otherwise.
#include "codegen/flops.h"

#include <gtest/gtest.h>

namespace dlc::codegen {
namespace {

TEST(Flops, MatMulCountsTwoPerMultiplyAdd) {
  ir::Graph g;
  ir::Value* a = g.add_input("a", TensorType{DType::F32, {4, 5}});
  ir::Value* b = g.add_input("b", TensorType{DType::F32, {6, 5}});
  Attrs tb;
  tb.set("transpose_b", int64_t(1));
  EXPECT_EQ(node_flops(*g.add_node(ir::OpKind::MatMul, {a, b}, tb)), 2 * 4 * 6 * 5);
}

TEST(Flops, ConvCountsWindowTimesInputChannels) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {1, 2, 5, 5}});
  ir::Value* w = g.add_input("w", TensorType{DType::F32, {3, 2, 3, 3}});
  Attrs a;
  a.set("kernel_shape", Shape{3, 3});
  a.set("pads", Shape{1, 1, 1, 1});
  EXPECT_EQ(node_flops(*g.add_node(ir::OpKind::Conv, {x, w}, a)), 2 * (3 * 5 * 5) * (2 * 9));
}

TEST(Flops, ElementwiseCountsOutputElements) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {3, 7}});
  EXPECT_EQ(node_flops(*g.add_node(ir::OpKind::Relu, {x})), 21);
}

TEST(Flops, FusedElementwiseCountsEachArithmeticInstruction) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F16, {3, 7}});
  ir::Value* b = g.add_input("b", TensorType{DType::F16, {7}});
  Attrs a;  // Add and Relu count; the input loads and the rounding Cast do not
  a.set("program", std::string("%0 = input 0; %1 = input 1; %2 = Add %0, %1; %3 = Cast %2 to f16; "
                               "%4 = Relu %3; output %4 f16"));
  EXPECT_EQ(node_flops(*g.add_node(ir::OpKind::FusedElementwise, {x, b}, a)), 2 * 21);
}

// Attention counts the ops it stands for: per score, q kᵀ (2 D), the scaling and Softmax (1 each)
// and p v (2 Dv); its gradient the four products (4 D + 4 Dv) and SoftmaxGrad (1).
TEST(Flops, AttentionCountsTheUnfusedOps) {
  ir::Graph g;
  ir::Value* q = g.add_input("q", TensorType{DType::F32, {2, 3, 8}});
  ir::Value* k = g.add_input("k", TensorType{DType::F32, {2, 5, 8}});
  ir::Value* v = g.add_input("v", TensorType{DType::F32, {2, 5, 4}});
  Attrs a;
  a.set("scale", 0.5);
  ir::Node* att = g.add_node(ir::OpKind::Attention, {q, k, v}, a, {"o", "lse"});
  const int64_t scores = 2 * 3 * 5;
  EXPECT_EQ(node_flops(*att), scores * (2 * 8 + 2 + 2 * 4));
  ir::Node* grad =
      g.add_node(ir::OpKind::AttentionGrad, {att->outputs[0], q, k, v, att->outputs[0], att->outputs[1]}, a,
                 {"dq", "dk", "dv"});
  EXPECT_EQ(node_flops(*grad), scores * (4 * 8 + 4 * 4 + 1));
}

}  // namespace
}  // namespace dlc::codegen
