// The gradient rule of every differentiable op against finite differences (gradient_check.h):
// one op whose float operands are parameters, a loss that sums its outputs with random weights,
// in f64 where the kernels run f64 (f32 with a looser tolerance where they do not), plus the
// rules' documented choices at non-differentiable points and their errors.
#include <gtest/gtest.h>

#include <random>

#include "dlc/error.h"
#include "tests/unit/gradient_check.h"

namespace dlc {
namespace {

using ir::OpKind;

// One operand of the op under test: a parameter (differentiated), a constant, or absent.
struct Operand {
  enum Kind { Param, Constant, Absent } kind = Absent;
  Tensor value;
};
Operand param(Tensor t) { return {Operand::Param, std::move(t)}; }
Operand constant(Tensor t) { return {Operand::Constant, std::move(t)}; }
Operand absent() { return {}; }

struct OpCase {
  OpKind op;
  std::vector<Operand> operands;
  Attrs attrs = {};
  int outputs = 1;
  std::vector<int> loss_outputs = {0};  // the outputs whose weighted sum is the loss
};

Attrs attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attrs a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}

class GradRule : public ::testing::Test {
 protected:
  std::mt19937 rng{1};

  Tensor uniform(const Shape& shape, double lo = -2, double hi = 2, DType dtype = DType::F64) {
    return gradcheck::uniform_tensor(shape, rng, lo, hi, dtype);
  }
  Tensor f32(const Shape& shape, double lo = -2, double hi = 2) { return uniform(shape, lo, hi, DType::F32); }

  // Builds the op over its operands and checks every parameter's gradient.
  void check(const OpCase& c, double tolerance = 1e-6) {
    ir::Graph g;
    std::vector<ir::Value*> inputs;
    for (size_t i = 0; i < c.operands.size(); ++i) {
      const Operand& o = c.operands[i];
      const std::string name = "x" + std::to_string(i);
      inputs.push_back(o.kind == Operand::Absent  ? nullptr
                       : o.kind == Operand::Param ? g.add_parameter(name, o.value)
                                                  : g.add_constant(name, o.value));
    }
    std::vector<std::string> names;
    for (int i = 0; i < c.outputs; ++i) names.push_back("y" + std::to_string(i));
    ir::Node* n = g.add_node(c.op, inputs, c.attrs, names, "op");
    std::vector<ir::Value*> ys;
    for (int i : c.loss_outputs) ys.push_back(n->outputs[size_t(i)]);
    gradcheck::weighted_sum_loss(g, ys, rng);
    gradcheck::check_gradients(g, {.tolerance = tolerance});
  }

  // The gradient autodiff gives x for loss = Σ w·op(x) with w = `weights` (no finite differences):
  // for the rules' choices at points where the op is not differentiable.
  std::vector<double> gradient_of(OpKind op, const Tensor& x, const Attrs& a, const Tensor& weights) {
    ir::Graph g;
    ir::Value* p = g.add_parameter("x", x);
    ir::Value* y = g.add_node(op, {p}, a)->outputs[0];
    ir::Value* w = g.add_constant("w", weights);
    Attrs sum;
    sum.set("keepdims", int64_t(0));
    g.add_output(
        g.add_node(OpKind::ReduceSum, {g.add_node(OpKind::Mul, {y, w})->outputs[0]}, sum)->outputs[0]);
    passes::Autodiff().run(g);
    g.set_outputs({g.outputs()[0], g.find_value(passes::gradient_name("x"))});
    auto session = Session::create(codegen::lower_to_plan(g));
    session->run();
    return session->output(passes::gradient_name("x")).as_double();
  }
};

// ---- elementwise

TEST_F(GradRule, Add) { check({OpKind::Add, {param(uniform({2, 3})), param(uniform({3}))}}); }
TEST_F(GradRule, Sub) { check({OpKind::Sub, {param(uniform({2, 1})), param(uniform({2, 3}))}}); }
TEST_F(GradRule, Mul) { check({OpKind::Mul, {param(uniform({2, 3})), param(uniform({2, 1}))}}); }
TEST_F(GradRule, Div) { check({OpKind::Div, {param(uniform({2, 3})), param(uniform({3}, 0.5, 2))}}); }
TEST_F(GradRule, Neg) { check({OpKind::Neg, {param(uniform({2, 3}))}}); }
TEST_F(GradRule, Sigmoid) { check({OpKind::Sigmoid, {param(uniform({2, 3}))}}); }
TEST_F(GradRule, Tanh) { check({OpKind::Tanh, {param(uniform({2, 3}))}}); }
// ReluGrad runs f32 only.
TEST_F(GradRule, Relu) { check({OpKind::Relu, {param(f32({2, 5}))}}, 1e-3); }
TEST_F(GradRule, Erf) { check({OpKind::Erf, {param(uniform({2, 3}))}}); }
TEST_F(GradRule, Exp) { check({OpKind::Exp, {param(uniform({2, 3}))}}); }
TEST_F(GradRule, Log) { check({OpKind::Log, {param(uniform({2, 3}, 0.2, 3))}}); }
TEST_F(GradRule, Sqrt) { check({OpKind::Sqrt, {param(uniform({2, 3}, 0.2, 3))}}); }
TEST_F(GradRule, Reciprocal) { check({OpKind::Reciprocal, {param(uniform({2, 3}, 0.3, 3))}}); }
TEST_F(GradRule, Abs) { check({OpKind::Abs, {param(uniform({2, 4}))}}); }
TEST_F(GradRule, Sin) { check({OpKind::Sin, {param(uniform({2, 3}))}}); }
TEST_F(GradRule, Cos) { check({OpKind::Cos, {param(uniform({2, 3}))}}); }
TEST_F(GradRule, Softplus) { check({OpKind::Softplus, {param(uniform({2, 3}, -4, 4))}}); }
TEST_F(GradRule, TrigonometricAndHyperbolic) {
  check({OpKind::Tan, {param(uniform({2, 3}, -1, 1))}});
  check({OpKind::Sinh, {param(uniform({2, 3}))}});
  check({OpKind::Cosh, {param(uniform({2, 3}))}});
  check({OpKind::Asin, {param(uniform({2, 3}, -0.9, 0.9))}});
  check({OpKind::Acos, {param(uniform({2, 3}, -0.9, 0.9))}});
  check({OpKind::Atan, {param(uniform({2, 3}))}});
  check({OpKind::Asinh, {param(uniform({2, 3}))}});
  check({OpKind::Acosh, {param(uniform({2, 3}, 1.2, 3))}});
  check({OpKind::Atanh, {param(uniform({2, 3}, -0.9, 0.9))}});
}
TEST_F(GradRule, SmoothActivations) {
  check({OpKind::Softsign, {param(uniform({2, 4}))}});
  check({OpKind::Mish, {param(uniform({2, 4}, -4, 4))}});
  check({OpKind::Selu, {param(uniform({2, 4}))}});
  check({OpKind::Celu, {param(uniform({2, 4}))}, attrs({{"alpha", 0.7}})});
}
TEST_F(GradRule, ThresholdedReluAndHardSwish) {
  check({OpKind::ThresholdedRelu, {param(uniform({3, 4}))}, attrs({{"alpha", 0.5}})});
  check({OpKind::HardSwish, {param(uniform({3, 4}, -5, 5))}});
}
TEST_F(GradRule, LeakyRelu) { check({OpKind::LeakyRelu, {param(uniform({2, 4}))}, attrs({{"alpha", 0.1}})}); }
TEST_F(GradRule, Elu) { check({OpKind::Elu, {param(uniform({2, 4}))}, attrs({{"alpha", 0.7}})}); }
TEST_F(GradRule, HardSigmoid) {
  check({OpKind::HardSigmoid, {param(uniform({3, 4}, -5, 5))}, attrs({{"alpha", 0.25}, {"beta", 0.4}})});
}
TEST_F(GradRule, PReluWithAChannelSlope) {
  check({OpKind::PRelu, {param(uniform({2, 3, 2})), param(uniform({3, 1}, 0.1, 0.5))}});
}

TEST_F(GradRule, PowOfBothOperands) {
  check({OpKind::Pow, {param(uniform({2, 3}, 0.3, 2)), param(uniform({3}, -2, 2))}});
}
TEST_F(GradRule, PowOfANegativeBaseByAnIntegerExponent) {
  check({OpKind::Pow, {param(uniform({2, 3})), constant(Tensor::from_int64({3}, {}))}});
}

TEST_F(GradRule, ModOfBothOperands) {
  check({OpKind::Mod,
         {param(uniform({2, 3}, -4, 4)), param(uniform({3}, 0.7, 2))},
         attrs({{"fmod", int64_t(1)}})});
}

TEST_F(GradRule, MaxAndMinWithBroadcasting) {
  check({OpKind::Max, {param(uniform({2, 3})), param(uniform({3}))}});
  check({OpKind::Min, {param(uniform({2, 1})), param(uniform({2, 3}))}});
}

TEST_F(GradRule, MaxSplitsTiesEvenlyLikePyTorch) {
  ir::Graph g;
  ir::Value* a = g.add_parameter("a", Tensor::from_double(DType::F64, {1, 5, 2}, {3}));
  ir::Value* b = g.add_parameter("b", Tensor::from_double(DType::F64, {1, 3, 4}, {3}));
  ir::Value* y = g.add_node(OpKind::Max, {a, b})->outputs[0];
  g.add_output(g.add_node(OpKind::ReduceSum, {y})->outputs[0]);
  passes::Autodiff().run(g);
  g.set_outputs({g.find_value("a@grad"), g.find_value("b@grad")});
  auto session = Session::create(codegen::lower_to_plan(g));
  session->run();
  EXPECT_EQ(session->output("a@grad").as_double(), (std::vector<double>{0.5, 1, 0}));
  EXPECT_EQ(session->output("b@grad").as_double(), (std::vector<double>{0.5, 0, 1}));
}

TEST_F(GradRule, WhereWithBroadcasting) {
  Tensor cond(TensorType{DType::Bool, {2, 3}});
  for (int i = 0; i < 6; ++i) cond.data<uint8_t>()[i] = uint8_t(i % 4 == 0);
  check({OpKind::Where, {constant(cond), param(uniform({3})), param(uniform({2, 1}))}});
}

TEST_F(GradRule, ClipWithBothBoundsAsParameters) {
  check({OpKind::Clip,
         {param(uniform({3, 4}, -3, 3)), param(Tensor::from_double(DType::F64, {-0.95}, {})),
          param(Tensor::from_double(DType::F64, {1.05}, {}))}});
}
TEST_F(GradRule, ClipWithOnlyAnUpperBound) {
  check({OpKind::Clip,
         {param(uniform({3, 4}, -3, 3)), absent(), constant(Tensor::from_double(DType::F64, {0.55}, {}))}});
}
TEST_F(GradRule, ClipPassesTheGradientAtTheBoundsLikePyTorch) {
  ir::Graph g;
  ir::Value* x = g.add_parameter("x", Tensor::from_double(DType::F64, {-2, -1, 0, 1, 2}, {5}));
  ir::Value* lo = g.add_constant("lo", Tensor::from_double(DType::F64, {-1}, {}));
  ir::Value* hi = g.add_constant("hi", Tensor::from_double(DType::F64, {1}, {}));
  ir::Value* y = g.add_node(OpKind::Clip, {x, lo, hi})->outputs[0];
  g.add_output(g.add_node(OpKind::ReduceSum, {y})->outputs[0]);
  passes::Autodiff().run(g);
  g.set_outputs({g.find_value("x@grad")});
  auto session = Session::create(codegen::lower_to_plan(g));
  session->run();
  EXPECT_EQ(session->output("x@grad").as_double(), (std::vector<double>{0, 1, 1, 1, 0}));
}

TEST_F(GradRule, CastBetweenFloatTypes) {
  Attrs to;
  to.set("to", std::string("f64"));
  check({OpKind::Cast, {param(f32({2, 3}))}, to}, 1e-3);
}

TEST_F(GradRule, SignFloorCeilRoundPassNoGradient) {
  // y = x * op(x): the gradient is op(x), the op itself contributing nothing.
  for (OpKind op : {OpKind::Sign, OpKind::Floor, OpKind::Ceil, OpKind::Round}) {
    ir::Graph g;
    ir::Value* x = g.add_parameter("x", uniform({2, 3}, -3, 3));
    ir::Value* y = g.add_node(OpKind::Mul, {x, g.add_node(op, {x})->outputs[0]})->outputs[0];
    gradcheck::weighted_sum_loss(g, {y}, rng);
    gradcheck::check_gradients(g, {});
  }
}

// ---- reductions, softmax

TEST_F(GradRule, ReduceSumAndMean) {
  check({OpKind::ReduceSum,
         {param(uniform({2, 3, 4}))},
         attrs({{"axes", Shape{1}}, {"keepdims", int64_t(0)}})});
  check({OpKind::ReduceMean, {param(uniform({2, 3, 4}))}, attrs({{"axes", Shape{0, 2}}})});
  check({OpKind::ReduceMean, {param(uniform({2, 3}))}, attrs({{"keepdims", int64_t(0)}})});
}

TEST_F(GradRule, ReduceMaxAndMin) {
  check({OpKind::ReduceMax,
         {param(uniform({2, 3, 4}))},
         attrs({{"axes", Shape{1}}, {"keepdims", int64_t(0)}})});
  check({OpKind::ReduceMin, {param(uniform({2, 3, 4}))}, attrs({{"axes", Shape{0, 2}}})});
}

TEST_F(GradRule, ReduceProd) {
  check({OpKind::ReduceProd,
         {param(uniform({2, 3, 4}, 0.5, 1.5))},
         attrs({{"axes", Shape{1}}, {"keepdims", int64_t(0)}})});
  check({OpKind::ReduceProd, {param(uniform({2, 3}, -1.5, 1.5))}, attrs({{"axes", Shape{0, 1}}})});
}

TEST_F(GradRule, ReduceProdIsExactAtZerosLikePyTorch) {
  // Rows with no zero, one zero and two zeros: dx_i is the product of the other entries.
  const Tensor x = Tensor::from_double(DType::F64, {1, 2, 4, 0, 2, 3, 0, 0, 5}, {3, 3});
  EXPECT_EQ(gradient_of(OpKind::ReduceProd, x, attrs({{"axes", Shape{1}}, {"keepdims", int64_t(0)}}),
                        Tensor::from_double(DType::F64, {1, 1, 1}, {3})),
            (std::vector<double>{8, 4, 2, 6, 0, 0, 0, 0, 0}));
}

TEST_F(GradRule, ReduceMaxSpreadsTiesEvenlyLikeAmax) {
  Attrs a;
  a.set("keepdims", int64_t(0));
  const Tensor x = Tensor::from_double(DType::F64, {1, 3, 3, 2}, {4});
  EXPECT_EQ(gradient_of(OpKind::ReduceMax, x, a, Tensor::from_double(DType::F64, {2}, {})),
            (std::vector<double>{0, 1, 1, 0}));
}

TEST_F(GradRule, ReduceSumSquareL1L2) {
  check({OpKind::ReduceSumSquare, {param(uniform({2, 3}))}, attrs({{"axes", Shape{1}}})});
  check({OpKind::ReduceL1, {param(uniform({2, 3}))}, attrs({{"axes", Shape{0}}, {"keepdims", int64_t(0)}})});
  check({OpKind::ReduceL2, {param(uniform({2, 3}))}, attrs({{"axes", Shape{1}}, {"keepdims", int64_t(0)}})});
}

TEST_F(GradRule, ReduceL2IsZeroAtTheZeroVector) {
  Attrs a;
  a.set("keepdims", int64_t(0));
  EXPECT_EQ(gradient_of(OpKind::ReduceL2, Tensor::from_double(DType::F64, {0, 0}, {2}), a,
                        Tensor::from_double(DType::F64, {1}, {})),
            (std::vector<double>{0, 0}));
}

TEST_F(GradRule, ReduceLogSumAndLogSumExp) {
  check({OpKind::ReduceLogSum, {param(uniform({2, 3}, 0.2, 2))}, attrs({{"axes", Shape{1}}})});
  check({OpKind::ReduceLogSumExp,
         {param(uniform({2, 3, 2}))},
         attrs({{"axes", Shape{0, 2}}, {"keepdims", int64_t(0)}})});
}

TEST_F(GradRule, SoftmaxAndLogSoftmaxOnAnyAxis) {
  check({OpKind::Softmax, {param(uniform({2, 3, 4}))}, attrs({{"axis", int64_t(1)}})});
  check({OpKind::Softmax, {param(uniform({2, 3}))}, attrs({{"axis", int64_t(-1)}})});
  check({OpKind::LogSoftmax, {param(uniform({2, 3, 4}))}, attrs({{"axis", int64_t(0)}})});
  check({OpKind::LogSoftmax, {param(uniform({3, 4}))}, attrs({{"axis", int64_t(-1)}})});
}

// ---- shape ops

TEST_F(GradRule, ReshapeIdentityTranspose) {
  check({OpKind::Reshape, {param(uniform({2, 3}))}, attrs({{"shape", Shape{3, 2}}})});
  check({OpKind::Identity, {param(uniform({2, 3}))}});
  check({OpKind::Transpose, {param(uniform({2, 3, 4}))}, attrs({{"perm", Shape{2, 0, 1}}})});
}

TEST_F(GradRule, ExpandAndTile) {
  check({OpKind::Expand, {param(uniform({3, 1}))}, attrs({{"shape", Shape{2, 3, 4}}})});
  check({OpKind::Tile, {param(uniform({2, 3}))}, attrs({{"repeats", Shape{2, 3}}})});
}

TEST_F(GradRule, TriluAndCumSum) {
  check({OpKind::Trilu, {param(uniform({2, 3, 4}))}, attrs({{"upper", int64_t(0)}, {"k", int64_t(1)}})});
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1})
      check({OpKind::CumSum,
             {param(uniform({2, 4, 3}))},
             attrs({{"axis", int64_t(1)}, {"exclusive", exclusive}, {"reverse", reverse}})});
}

TEST_F(GradRule, ConcatAndSplit) {
  check({OpKind::Concat,
         {param(uniform({2, 1, 2})), param(uniform({2, 3, 2})), param(uniform({2, 2, 2}))},
         attrs({{"axis", int64_t(-2)}})});
  check({OpKind::Split,
         {param(uniform({2, 6}))},
         attrs({{"axis", int64_t(1)}, {"split", Shape{1, 3, 2}}}),
         3,
         {0, 1, 2}});
  // An output that does not reach the loss contributes zeros.
  check({OpKind::Split,
         {param(uniform({4, 2}))},
         attrs({{"axis", int64_t(0)}, {"split", Shape{1, 3}}}),
         2,
         {1}});
}

TEST_F(GradRule, SliceWithStepsAndNegativeSteps) {
  check(
      {OpKind::Slice,
       {param(uniform({4, 5}))},
       attrs(
           {{"starts", Shape{1, 0}}, {"ends", Shape{4, 5}}, {"axes", Shape{0, 1}}, {"steps", Shape{1, 2}}})});
  check({OpKind::Slice,
         {param(uniform({3, 6}))},
         attrs({{"starts", Shape{5}}, {"ends", Shape{-1}}, {"axes", Shape{1}}, {"steps", Shape{-2}}})});
}

TEST_F(GradRule, PadConstantWithPositiveAndNegativePads) {
  check({OpKind::Pad, {param(uniform({2, 3}))}, attrs({{"pads", Shape{1, 0, 2, 1}}, {"value", 0.5}})});
  check({OpKind::Pad, {param(uniform({3, 4}))}, attrs({{"pads", Shape{-1, 2, 1, -2}}})});
}

TEST_F(GradRule, PadInReflectModeIsAnErrorNamingTheNode) {
  ir::Graph g;
  ir::Value* x = g.add_parameter("x", uniform({3, 4}));
  ir::Value* y =
      g.add_node(OpKind::Pad, {x}, attrs({{"pads", Shape{1, 1, 1, 1}}, {"mode", std::string("reflect")}}),
                 {""}, "my_pad")
          ->outputs[0];
  g.add_output(g.add_node(OpKind::ReduceSum, {y})->outputs[0]);
  try {
    passes::Autodiff().run(g);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'my_pad'"), std::string::npos) << e.what();
  }
}

TEST_F(GradRule, GatherSumsDuplicateIndices) {
  // Axis 0 like an embedding lookup, with repeated and negative indices.
  check(
      {OpKind::Gather, {param(uniform({5, 3})), constant(Tensor::from_int64({1, 3, 1, -1, 1, 0}, {2, 3}))}});
  check({OpKind::Gather,
         {param(uniform({2, 4, 3})), constant(Tensor::from_int64({3, 0, 3}, {3}))},
         attrs({{"axis", int64_t(1)}})});
  check({OpKind::Gather,
         {param(uniform({3, 4})), constant(Tensor::from_int64({2}, {}))},
         attrs({{"axis", int64_t(-1)}})});
}

TEST_F(GradRule, GatherElementsSumsDuplicateIndices) {
  // torch.gather's pattern (labels picking one class per row), repeated and negative indices, and
  // indices smaller than the data off the axis.
  check({OpKind::GatherElements,
         {param(uniform({4, 5})), constant(Tensor::from_int64({2, -1, 0, 2}, {4, 1}))},
         attrs({{"axis", int64_t(1)}})});
  check({OpKind::GatherElements,
         {param(uniform({3, 4, 2})),
          constant(Tensor::from_int64({0, 2, 2, -1, 1, 1, 0, 0, 2, 2, 1, 0}, {3, 2, 2}))},
         attrs({{"axis", int64_t(0)}})});
  check({OpKind::GatherElements,
         {param(uniform({2, 3, 4})), constant(Tensor::from_int64({3, 3, 0, -4, 1, 2}, {2, 1, 3}))},
         attrs({{"axis", int64_t(-1)}})});
}

// ---- nn

TEST_F(GradRule, MatMulWithBatchBroadcasting) {
  check({OpKind::MatMul, {param(uniform({2, 3, 4})), param(uniform({4, 5}))}});
  check({OpKind::MatMul, {param(uniform({2, 1, 3, 4})), param(uniform({1, 3, 4, 2}))}});
  check({OpKind::MatMul, {param(uniform({2, 3, 3, 4})), param(uniform({2, 3, 4, 2}))}});
  check({OpKind::MatMul,
         {param(uniform({3, 2})), param(uniform({2, 4, 3}))},
         attrs({{"transpose_a", int64_t(1)}, {"transpose_b", int64_t(1)}})});
  check({OpKind::MatMul,
         {param(uniform({2, 4, 3})), param(uniform({4, 2}))},
         attrs({{"transpose_a", int64_t(1)}})});
}

// The fused attention (passes/fuse_attention.h): AttentionGrad, with the probabilities recomputed
// from lse. Queries, keys and values of different sizes (S 3, Sk 5, D 4, Dv 2), in two groups;
// then rank 4 (batch, heads) with scale 1; then causal; then seq-major ([batch, seq, heads, D]),
// causal or not.
TEST_F(GradRule, Attention) {
  check({OpKind::Attention,
         {param(uniform({2, 3, 4})), param(uniform({2, 5, 4})), param(uniform({2, 5, 2}))},
         attrs({{"scale", 0.5}}),
         2});
  check({OpKind::Attention,
         {param(uniform({1, 2, 3, 4}, -1, 1)), param(uniform({1, 2, 3, 4}, -1, 1)),
          param(uniform({1, 2, 3, 4}))},
         attrs({{"scale", 1.0}}),
         2});
  // Causal: row i attends to keys 0…i only; more rows than keys.
  check({OpKind::Attention,
         {param(uniform({2, 5, 4})), param(uniform({2, 4, 4})), param(uniform({2, 4, 3}))},
         attrs({{"scale", 0.5}, {"causal", int64_t(1)}}),
         2});
  check({OpKind::Attention,
         {param(uniform({2, 3, 2, 4})), param(uniform({2, 5, 2, 4})), param(uniform({2, 5, 2, 3}))},
         attrs({{"scale", 0.5}, {"seq_major", int64_t(1)}}),
         2});
  check({OpKind::Attention,
         {param(uniform({1, 4, 3, 2})), param(uniform({1, 4, 3, 2})), param(uniform({1, 4, 3, 2}))},
         attrs({{"scale", 0.8}, {"causal", int64_t(1)}, {"seq_major", int64_t(1)}}),
         2});
}

// The fusion pass's epilogue (alpha * product + bias), should a fused graph be differentiated.
TEST_F(GradRule, MatMulWithFusedEpilogue) {
  check({OpKind::MatMul,
         {param(uniform({2, 3, 4})), param(uniform({5, 4})), param(uniform({5}))},
         attrs({{"transpose_b", int64_t(1)}, {"alpha", 0.5}})});
  check({OpKind::MatMul, {param(uniform({3, 4})), param(uniform({4, 2})), param(uniform({1, 2}))}});
}

TEST_F(GradRule, MatMulWithVectorOperands) {
  check({OpKind::MatMul, {param(uniform({4})), param(uniform({2, 4, 3}))}});
  check({OpKind::MatMul, {param(uniform({2, 3, 4})), param(uniform({4}))}});
  check({OpKind::MatMul, {param(uniform({4})), param(uniform({4}))}});
}

TEST_F(GradRule, MatMulOnOneDnnInF32) {
  check({OpKind::MatMul, {param(f32({2, 3, 4})), param(f32({4, 5}))}}, 2e-3);
}

TEST_F(GradRule, AveragePoolCountingPaddingBothWays) {
  for (int64_t include : {0, 1}) {
    check({OpKind::AveragePool,
           {param(uniform({1, 2, 5, 5}))},
           attrs({{"kernel_shape", Shape{3, 2}},
                  {"strides", Shape{2, 2}},
                  {"pads", Shape{1, 0, 1, 1}},
                  {"count_include_pad", include}})});
  }
  check({OpKind::AveragePool,
         {param(uniform({2, 1, 6}))},
         attrs({{"kernel_shape", Shape{3}}, {"strides", Shape{2}}, {"ceil_mode", int64_t(1)}})});
}

TEST_F(GradRule, ConvStridedAndGroupedInF32) {
  check({OpKind::Conv,
         {param(f32({1, 4, 5, 5}, -1, 1)), param(f32({2, 2, 3, 3}, -1, 1)), param(f32({2}, -1, 1))},
         attrs({{"kernel_shape", Shape{3, 3}},
                {"strides", Shape{2, 2}},
                {"pads", Shape{1, 0, 1, 1}},
                {"group", int64_t(2)}})},
        2e-2);
}

TEST_F(GradRule, ConvTransposeStridedAndGroupedInF32) {
  check({OpKind::ConvTranspose,
         {param(f32({1, 4, 3, 3}, -1, 1)), param(f32({4, 1, 3, 2}, -1, 1)), param(f32({2}, -1, 1))},
         attrs({{"kernel_shape", Shape{3, 2}},
                {"strides", Shape{2, 2}},
                {"pads", Shape{1, 0, 0, 1}},
                {"output_padding", Shape{1, 0}},
                {"group", int64_t(2)}})},
        2e-2);
}

TEST_F(GradRule, MaxPoolInF32) {
  check({OpKind::MaxPool,
         {param(f32({1, 2, 4, 4}))},
         attrs({{"kernel_shape", Shape{2, 2}}, {"strides", Shape{2, 2}}})},
        1e-3);
}

// ---- norm

TEST_F(GradRule, LayerNormalizationOfAllInputs) {
  check({OpKind::LayerNormalization,
         {param(uniform({2, 3, 4})), param(uniform({4})), param(uniform({4}))},
         attrs({{"axis", int64_t(-1)}, {"epsilon", 1e-3}})});
  // Two normalized axes, a scale that broadcasts over one of them, no bias.
  check({OpKind::LayerNormalization,
         {param(uniform({2, 3, 4})), param(uniform({1, 4}))},
         attrs({{"axis", int64_t(1)}})});
}

TEST_F(GradRule, LayerNormalizationInF32) {
  check({OpKind::LayerNormalization, {param(f32({4, 8})), param(f32({8})), param(f32({8}))}}, 1e-2);
}

TEST_F(GradRule, InstanceNormalization) {
  check(
      {OpKind::InstanceNormalization, {param(uniform({2, 3, 4})), param(uniform({3})), param(uniform({3}))}});
  check({OpKind::InstanceNormalization,
         {param(uniform({2, 2, 3, 2})), param(uniform({2})), param(uniform({2}))},
         attrs({{"epsilon", 1e-2}})});
}

TEST_F(GradRule, BatchNormalizationInTrainingModeInF32) {
  Tensor ones = Tensor::from_double(DType::F32, {1, 1, 1}, {3});
  check({OpKind::BatchNormalization,
         {param(f32({4, 3, 2})), param(f32({3})), param(f32({3})), constant(f32({3})), constant(ones)},
         attrs({{"training_mode", int64_t(1)}})},
        2e-2);
}

TEST_F(GradRule, DropoutAppliesTheForwardMask) {
  check({OpKind::Dropout, {param(uniform({4, 5}))}, attrs({{"ratio", 0.3}, {"seed", int64_t(9)}})});
}

TEST_F(GradRule, DropoutWithoutItsMaskIsAnError) {
  ir::Graph g;
  ir::Value* x = g.add_parameter("x", uniform({2, 3}));
  ir::Value* y = g.add_node(OpKind::Dropout, {x}, {}, {""}, "my_dropout")->outputs[0];
  g.add_output(g.add_node(OpKind::ReduceSum, {y})->outputs[0]);
  EXPECT_THROW(passes::Autodiff().run(g), Error);
}

// ---- losses

TEST_F(GradRule, SoftmaxCrossEntropyLossInF32) {
  const Tensor target = Tensor::from_int64({0, 3, 2, 1, 1, 0}, {3, 2});
  check({OpKind::SoftmaxCrossEntropyLoss, {param(f32({3, 4, 2})), constant(target)}}, 1e-3);
}

TEST_F(GradRule, LossesWithWeightsIgnoredTargetsAndEveryReduction) {
  const Tensor target = Tensor::from_int64({0, 3, 2, 1, 1, 3}, {3, 2});
  const Tensor weight = uniform({4}, 0.2, 2);
  for (OpKind op : {OpKind::NegativeLogLikelihoodLoss, OpKind::SoftmaxCrossEntropyLoss})
    for (const char* reduction : {"none", "sum", "mean"}) {
      SCOPED_TRACE(reduction);
      const Attrs a = attrs({{"reduction", std::string(reduction)}, {"ignore_index", int64_t(3)}});
      check({op, {param(uniform({3, 4, 2})), constant(target), constant(weight)}, a});
      check({op, {param(uniform({3, 4, 2})), constant(target)}, a});
    }
}

TEST_F(GradRule, SoftmaxCrossEntropyLossWithItsLogProbOutput) {
  const Tensor target = Tensor::from_int64({2, 0, 1}, {3});
  check({OpKind::SoftmaxCrossEntropyLoss, {param(uniform({3, 4})), constant(target)}, {}, 2, {0, 1}});
  check({OpKind::SoftmaxCrossEntropyLoss, {param(f32({3, 4})), constant(target)}, {}, 2, {0, 1}}, 1e-3);
}

}  // namespace
}  // namespace dlc
