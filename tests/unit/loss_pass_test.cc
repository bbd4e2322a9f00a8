// The loss pass: each --loss kind's value against PyTorch's on fixed inputs, its gradient against
// finite differences, and its errors.
#include <gtest/gtest.h>

#include <random>

#include "dlc/error.h"
#include "tests/unit/gradient_check.h"

namespace dlc {
namespace {

using gradcheck::check_gradients;
using gradcheck::random_tensor;

// The loss `kind` of `x` against `label` (both f64 [3, 3]), computed by the lowered plan.
double loss_of(const std::string& kind, const std::vector<double>& x, const std::vector<double>& label) {
  ir::Graph g;
  ir::Value* in = g.add_input("x", TensorType{DType::F64, {3, 3}});
  g.add_output(g.add_node(ir::OpKind::Identity, {in})->outputs[0]);
  passes::Loss({kind, "", "label"}).run(g);
  g.set_outputs({g.outputs()[0]});
  passes::DeadCodeElimination().run(g);
  ir::verify(g);
  auto session = Session::create(codegen::lower_to_plan(g));
  session->set_input("x", Tensor::from_double(DType::F64, x, {3, 3}));
  session->set_input("label", Tensor::from_double(DType::F64, label, {3, 3}));
  session->run();
  return session->output(g.outputs()[0]->name).as_double()[0];
}

// Logits with large magnitudes (±40) where the naive formula overflows, and soft labels.
const std::vector<double> kLogits = {-2.0, 0.5, 3.0, 1.5, -0.25, 0.0, 40.0, -40.0, 7.5};
const std::vector<double> kTargets = {0, 1, 1, 1, 0, 0.5, 0, 1, 0.25};

TEST(LossPass, BceLogitsMatchesPyTorch) {
  // torch.nn.functional.binary_cross_entropy_with_logits(x, y) in float64 (torch 1.13).
  EXPECT_NEAR(loss_of("bce_logits", kLogits, kTargets), 9.749516128521526, 1e-12);
}

TEST(LossPass, MseAndL1MatchTheirDefinitions) {
  double mse = 0, l1 = 0;
  for (size_t i = 0; i < kLogits.size(); ++i) {
    const double d = kLogits[i] - kTargets[i];
    mse += d * d / 9;
    l1 += std::abs(d) / 9;
  }
  EXPECT_NEAR(loss_of("mse", kLogits, kTargets), mse, 1e-12);
  EXPECT_NEAR(loss_of("l1", kLogits, kTargets), l1, 1e-12);
}

TEST(LossPass, BceLogitsGradientMatchesFiniteDifferences) {
  std::mt19937 rng(7);
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F64, {4, 3}});
  ir::Value* w = g.add_parameter("w", random_tensor({4, 3}, rng, 2.0, DType::F64));
  g.add_output(g.add_node(ir::OpKind::Mul, {x, w})->outputs[0]);
  check_gradients(g, {.loss = {"bce_logits", "", "label"},
                      .inputs = {{"x", random_tensor({4, 3}, rng, 1.0, DType::F64)},
                                 {"label", gradcheck::uniform_tensor({4, 3}, rng, 0, 1)}}});
}

TEST(LossPass, UnknownKindIsAnErrorListingTheKinds) {
  ir::Graph g;
  g.add_output(g.add_input("x", TensorType{DType::F32, {2, 3}}));
  try {
    passes::Loss({"hinge", "", "label"}).run(g);
    FAIL() << "the loss pass accepted an unknown kind";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'hinge'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bce_logits"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dlc
