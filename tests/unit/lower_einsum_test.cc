// The lower-einsum pass (passes/lower_einsum.h): each equation's lowered graph gives the CPU Einsum
// kernel's values, contains no Einsum, and differentiates (autodiff's MatMul, Transpose, Reshape,
// ReduceSum and Mul rules) to gradients that match finite differences; integer Einsums stay.
#include <gtest/gtest.h>

#include <random>

#include "passes/fuse_attention.h"
#include "passes/lower_einsum.h"
#include "tests/unit/gradient_check.h"

namespace dlc {
namespace {

using ir::OpKind;

struct EinsumCase {
  std::string equation;
  std::vector<Shape> shapes;
};

void PrintTo(const EinsumCase& c, std::ostream* os) { *os << c.equation; }

// The equations of ONNX's backend cases, attention's, a linear layer's, a three-operand chain,
// a letter summed inside one operand, an outer product, a scalar result and a pure transpose.
const std::vector<EinsumCase> kLowered = {
    {"bij,bjk->bik", {{3, 2, 5}, {3, 5, 4}}},
    {"i,i->", {{5}, {5}}},
    {"ij->i", {{3, 4}}},
    {"ij->ji", {{3, 4}}},
    {"bhqd,bhkd->bhqk", {{2, 3, 4, 5}, {2, 3, 6, 5}}},
    {"bhqk,bhkd->bqhd", {{2, 3, 4, 6}, {2, 3, 6, 5}}},
    {"bld,dh->blh", {{2, 3, 4}, {4, 5}}},
    {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
    {"abc,cd->bd", {{2, 3, 4}, {4, 5}}},
    {"i,j->ij", {{3}, {4}}},
    {"bij,bij->b", {{2, 3, 4}, {2, 3, 4}}},
    {"ij->ij", {{2, 3}}},
    {"bii->bi", {{2, 3, 3}}},             // a diagonal (ONNX's batch_diagonal case)
    {"ii->", {{4, 4}}},                   // a trace
    {"iji,j->ij", {{3, 2, 3}, {2}}},      // a diagonal feeding a contraction
    {"ij,jk->ik", {{2, 1}, {3, 4}}},      // j broadcast from size 1 in the first operand
    {"bij,bj->bi", {{1, 3, 4}, {2, 4}}},  // b broadcast in the first operand, kept in the output
};

class LowerEinsum : public ::testing::TestWithParam<EinsumCase> {
 protected:
  // The case's Einsum over `operands` (parameters or constants) as the graph's output "y".
  static ir::Node* einsum(ir::Graph& g, const EinsumCase& c, std::mt19937& rng, bool parameters) {
    std::vector<ir::Value*> ins;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      Tensor t = gradcheck::uniform_tensor(c.shapes[i], rng, -2, 2);
      const std::string name = "x" + std::to_string(i);
      ins.push_back(parameters ? g.add_parameter(name, std::move(t)) : g.add_constant(name, std::move(t)));
    }
    Attrs a;
    a.set("equation", c.equation);
    return g.add_node(OpKind::Einsum, ins, a, {"y"}, "einsum");
  }

  static Tensor evaluate(ir::Graph& g) {
    auto session = Session::create(codegen::lower_to_plan(g));
    session->run();
    return session->output("y");
  }
};

TEST_P(LowerEinsum, GivesTheEinsumKernelsValues) {
  const EinsumCase& c = GetParam();
  std::mt19937 rng(3), same_rng(3);
  ir::Graph reference, lowered;
  reference.add_output(einsum(reference, c, rng, false)->outputs[0]);
  lowered.add_output(einsum(lowered, c, same_rng, false)->outputs[0]);
  passes::LowerEinsum pass;
  EXPECT_TRUE(pass.run(lowered));
  EXPECT_EQ(pass.stats().at("einsums_lowered"), 1);
  ir::verify(lowered);
  for (const ir::Node* n : lowered.nodes()) EXPECT_NE(n->op, OpKind::Einsum);
  ASSERT_EQ(lowered.outputs()[0]->name, "y");
  const Tensor want = evaluate(reference), got = evaluate(lowered);
  ASSERT_EQ(got.type, want.type);
  const std::vector<double> w = want.as_double(), v = got.as_double();
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(v[i], w[i], 1e-12 * (1 + std::abs(w[i]))) << i;
}

TEST_P(LowerEinsum, DifferentiatesToFiniteDifferences) {
  const EinsumCase& c = GetParam();
  std::mt19937 rng(5);
  ir::Graph g;
  ir::Node* n = einsum(g, c, rng, true);
  gradcheck::weighted_sum_loss(g, {n->outputs[0]}, rng);
  ASSERT_TRUE(passes::LowerEinsum().run(g));
  gradcheck::check_gradients(g, {});
}

INSTANTIATE_TEST_SUITE_P(Equations, LowerEinsum, testing::ValuesIn(kLowered), [](const auto& info) {
  std::string name;
  for (char ch : info.param.equation) name += std::isalpha(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
});

// Attention written as Einsums lowers to the MatMul(q, Transpose(k)) -> Mul -> Softmax -> MatMul
// chain the fuse-attention pass knows: one Attention node (the flash-attention kernels of a 16-bit
// CUDA plan; a torch.einsum attention at head size 64 compiles to Attention and AttentionGrad).
TEST(LowerEinsumAttention, FusesIntoOneAttention) {
  ir::Graph g;
  const TensorType heads{DType::F32, {2, 2, 16, 64}};
  ir::Value *q = g.add_input("q", heads), *k = g.add_input("k", heads), *v = g.add_input("v", heads);
  Attrs scores_eq, context_eq, softmax;
  scores_eq.set("equation", std::string("bhqd,bhkd->bhqk"));
  context_eq.set("equation", std::string("bhqk,bhkd->bhqd"));
  softmax.set("axis", int64_t(-1));
  ir::Value* scores = g.add_node(OpKind::Einsum, {q, k}, scores_eq)->outputs[0];
  ir::Value* scale = g.add_constant("scale", Tensor::from_double(DType::F32, {0.125}, {}));
  ir::Value* scaled = g.add_node(OpKind::Mul, {scores, scale})->outputs[0];
  ir::Value* p = g.add_node(OpKind::Softmax, {scaled}, softmax)->outputs[0];
  g.add_output(g.add_node(OpKind::Einsum, {p, v}, context_eq, {"y"})->outputs[0]);
  ASSERT_TRUE(passes::LowerEinsum().run(g));
  passes::FuseAttention fuse(/*cuda_shapes_only=*/true);
  fuse.run(g);
  EXPECT_EQ(fuse.stats().at("attentions_fused"), 1);
  int attentions = 0;
  for (const ir::Node* n : g.nodes()) attentions += n->op == OpKind::Attention;
  EXPECT_EQ(attentions, 1);
}

// Integer Einsums stay Einsums, which the CPU kernel runs.
TEST(LowerEinsumKeeps, Integers) {
  for (const auto& [equation, shapes, dtype] :
       std::vector<std::tuple<std::string, std::vector<Shape>, DType>>{
           {"ij,jk->ik", {{2, 3}, {3, 4}}, DType::I64}, {"bii->bi", {{2, 3, 3}}, DType::I32}}) {
    ir::Graph g;
    std::vector<ir::Value*> ins;
    for (size_t i = 0; i < shapes.size(); ++i)
      ins.push_back(g.add_input("x" + std::to_string(i), {dtype, shapes[i]}));
    Attrs a;
    a.set("equation", equation);
    g.add_output(g.add_node(OpKind::Einsum, ins, a, {"y"}, "einsum")->outputs[0]);
    passes::LowerEinsum pass;
    EXPECT_FALSE(pass.run(g)) << equation;
    EXPECT_EQ(pass.stats().at("einsums_kept"), 1) << equation;
    EXPECT_EQ(g.nodes().at(0)->op, OpKind::Einsum) << equation;
  }
}

}  // namespace
}  // namespace dlc
