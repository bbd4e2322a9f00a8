// ONNX ops the importer writes as compositions of IR ops (frontend/onnx_ops/composite.cc): none
// of them reaches the IR under its own name, the differentiable ones differentiate (autodiff's
// Reshape, Transpose, AveragePool, ReduceMean, Pow, Where, Gather, GatherElementsGrad ... rules) to gradients
// that match finite differences, and CastLike, which ONNX's suite covers only with types dlc's runner skips,
// casts. The values of the others are checked against ONNX's backend suite (onnx_conformance).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>

#include "codegen/cpu_evaluator.h"
#include "dlc/error.h"
#include "frontend/onnx_import.h"
#include "frontend/onnx_tensor.h"
#include "tests/unit/gradient_check.h"

namespace dlc {
namespace {

struct CompositeCase {
  std::string op;
  Shape shape;
  std::vector<std::pair<std::string, int64_t>> int_attrs;
  std::vector<std::pair<std::string, double>> float_attrs;
  std::vector<std::pair<std::string, std::string>> string_attrs = {};
  Shape sizes = {};                  // Resize's sizes input, where given
  std::vector<Shape> operands = {};  // inputs after x: f64 normal initializers; {0}: an absent input
};

void PrintTo(const CompositeCase& c, std::ostream* os) { *os << c.op; }

// ---- building ONNX models in the tests

onnx::ModelProto empty_model(const std::string& name, int64_t opset) {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(opset);
  model.mutable_graph()->set_name(name);
  return model;
}

void add_initializer(onnx::GraphProto* g, const std::string& name, const Tensor& value) {
  onnx::TensorProto* t = g->add_initializer();
  frontend::tensor_to_onnx(value, t);
  t->set_name(name);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                          const std::string& output, const std::string& name = "") {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string& in : inputs) n->add_input(in);
  n->add_output(output);
  return n;
}

// A model of one `c.op` node reading initializer x (f64, normal) and giving graph output y.
onnx::ModelProto one_node_model(const CompositeCase& c, std::mt19937& rng) {
  onnx::ModelProto model = empty_model("composite", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_initializer(g, "x", gradcheck::random_tensor(c.shape, rng, 1.0, DType::F64));
  onnx::NodeProto* n = add_node(g, c.op, {"x"}, "y", "node");
  for (const auto& [name, v] : c.int_attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  for (const auto& [name, v] : c.string_attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  if (!c.sizes.empty()) {
    for (const char* absent : {"", ""}) n->add_input(absent);  // roi, scales
    n->add_input("sizes");
    add_initializer(g, "sizes", Tensor::from_int64(c.sizes, {int64_t(c.sizes.size())}));
  }
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (c.operands[i] == Shape{0}) {
      n->add_input("");
      continue;
    }
    const std::string name = "operand" + std::to_string(i + 1);
    n->add_input(name);
    add_initializer(g, name, gradcheck::random_tensor(c.operands[i], rng, 0.5, DType::F64));
  }
  for (const auto& [name, v] : c.float_attrs) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(float(v));
  }
  g->add_output()->set_name("y");
  return model;
}

class CompositeOp : public ::testing::TestWithParam<CompositeCase> {};

TEST_P(CompositeOp, ImportsAsIrOpsThatDifferentiateToFiniteDifferences) {
  const CompositeCase& c = GetParam();
  std::mt19937 rng(11);
  auto g = frontend::import_onnx_model(one_node_model(c, rng), ".", {}, "composite.onnx");
  for (const ir::Node* n : g->nodes()) EXPECT_NE(ir::op_name(n->op), c.op);
  gradcheck::weighted_sum_loss(*g, {g->outputs()[0]}, rng);
  gradcheck::check_gradients(*g, {});
}

INSTANTIATE_TEST_SUITE_P(
    Ops, CompositeOp,
    ::testing::Values(
        CompositeCase{"DepthToSpace", {2, 8, 3, 2}, {{"blocksize", 2}}, {}},
        CompositeCase{"SpaceToDepth", {2, 3, 4, 6}, {{"blocksize", 2}}, {}},
        CompositeCase{"LRN", {2, 5, 3, 2}, {{"size", 3}}, {{"alpha", 0.5}, {"beta", 0.75}, {"bias", 2.0}}},
        CompositeCase{"LRN", {2, 6, 4}, {{"size", 4}}, {{"alpha", 0.1}}},
        CompositeCase{"MeanVarianceNormalization", {2, 3, 4, 2}, {}, {}},
        CompositeCase{"Shrink", {4, 5}, {}, {{"lambd", 0.3}, {"bias", 0.2}}},
        CompositeCase{"DepthToSpace", {1, 8, 2, 3}, {{"blocksize", 2}}, {}, {{"mode", "CRD"}}},
        CompositeCase{"Resize", {1, 2, 3, 4}, {}, {}, {{"mode", "linear"}}, {1, 2, 6, 7}},
        CompositeCase{"Resize",
                      {1, 2, 5, 4},
                      {},
                      {},
                      {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}},
                      {1, 2, 3, 7}},
        CompositeCase{
            "Resize", {2, 1, 4, 3}, {{"exclude_outside", 1}}, {}, {{"mode", "cubic"}}, {2, 1, 7, 5}},
        CompositeCase{"Resize",
                      {1, 3, 3, 2},
                      {},
                      {},
                      {{"mode", "nearest"},
                       {"coordinate_transformation_mode", "asymmetric"},
                       {"nearest_mode", "floor"}},
                      {1, 3, 6, 4}},
        CompositeCase{"Resize", {1, 3, 6, 5}, {}, {}, {{"mode", "nearest"}}, {1, 3, 4, 2}},
        // X [seq 3, batch 2, input 4], hidden 3: W, R, B (, sequence_lens, initial_h, initial_c, P).
        CompositeCase{"LSTM",
                      {3, 2, 4},
                      {{"hidden_size", 3}},
                      {{"clip", 2.5}},
                      {{"direction", "bidirectional"}},
                      {},
                      {{2, 12, 4}, {2, 12, 3}, {2, 24}, {0}, {2, 2, 3}, {2, 2, 3}, {2, 9}}},
        CompositeCase{"GRU",
                      {3, 2, 4},
                      {{"hidden_size", 3}},
                      {},
                      {{"direction", "reverse"}},
                      {},
                      {{1, 9, 4}, {1, 9, 3}, {1, 18}, {0}, {1, 2, 3}}},
        CompositeCase{"GRU",
                      {2, 3, 4},
                      {{"hidden_size", 3}, {"linear_before_reset", 1}, {"layout", 1}},
                      {},
                      {},
                      {},
                      {{1, 9, 4}, {1, 9, 3}, {1, 18}}},
        CompositeCase{"RNN", {3, 2, 4}, {{"hidden_size", 3}}, {}, {}, {}, {{1, 3, 4}, {1, 3, 3}, {1, 6}}}),
    [](const auto& info) { return info.param.op + std::to_string(info.index); });

// A one-node model whose input 1 is the constant i64 `indices` (the rest as `c` says).
onnx::ModelProto with_indices(const CompositeCase& c, std::mt19937& rng, const Tensor& indices) {
  onnx::ModelProto model = one_node_model(c, rng);
  onnx::GraphProto* g = model.mutable_graph();
  g->mutable_node(0)->set_input(1, "indices");
  add_initializer(g, "indices", indices);
  return model;
}

void expect_composite_differentiates(const onnx::ModelProto& model, const std::string& op,
                                     std::mt19937& rng) {
  auto graph = frontend::import_onnx_model(model, ".", {}, op + ".onnx");
  for (const ir::Node* n : graph->nodes()) EXPECT_NE(ir::op_name(n->op), op);
  gradcheck::weighted_sum_loss(*graph, {graph->outputs()[0]}, rng);
  gradcheck::check_gradients(*graph, {});
}

// ScatterElements both ways, by finite differences in the data and the updates; "add" with a
// duplicate index (its contributions sum), "none" without.
TEST(CompositeImport, ScatterElementsDifferentiatesInDataAndUpdates) {
  for (const std::string reduction : {"add", "none"}) {
    CompositeCase c{"ScatterElements",          {3, 5}, {{"axis", 1}}, {},
                    {{"reduction", reduction}}, {},     {{0}, {3, 2}}};
    std::mt19937 rng(14);
    const std::vector<int64_t> indices = reduction == "add" ? std::vector<int64_t>{4, 4, 0, -2, 1, 2}
                                                            : std::vector<int64_t>{4, 1, 0, -2, 1, 2};
    expect_composite_differentiates(with_indices(c, rng, Tensor::from_int64(indices, {3, 2})),
                                    "ScatterElements", rng);
  }
}

// GatherND with batch dims and a negative index; ScatterND both ways (a duplicate under "add"),
// by finite differences in the data (and the updates).
TEST(CompositeImport, GatherNdAndScatterNdDifferentiate) {
  std::mt19937 rng(15);
  expect_composite_differentiates(
      with_indices({"GatherND", {2, 3, 4, 2}, {{"batch_dims", 1}}, {}, {}, {}, {{0}}}, rng,
                   Tensor::from_int64({2, -1, 0, 3, 1, 1, -3, 0}, {2, 2, 2})),
      "GatherND", rng);
  for (const std::string reduction : {"add", "none"}) {
    const std::vector<int64_t> rows =
        reduction == "add" ? std::vector<int64_t>{1, 3, 1} : std::vector<int64_t>{1, 3, -4};
    expect_composite_differentiates(
        with_indices({"ScatterND", {4, 3}, {}, {}, {{"reduction", reduction}}, {}, {{0}, {3, 3}}}, rng,
                     Tensor::from_int64(rows, {3, 1})),
        "ScatterND", rng);
  }
}

// MaxUnpool (a GatherGrad, then a Pad to a larger output_shape) by finite differences in X.
TEST(CompositeImport, MaxUnpoolDifferentiates) {
  std::mt19937 rng(16);
  onnx::ModelProto model = with_indices({"MaxUnpool", {1, 2, 2, 2}, {}, {}, {}, {}, {{0}}}, rng,
                                        Tensor::from_int64({5, 7, 13, 15, 0, 3, 9, 14}, {1, 2, 2, 2}));
  onnx::NodeProto* n = model.mutable_graph()->mutable_node(0);
  for (const char* name : {"kernel_shape", "strides"}) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : {2, 2}) a->add_ints(v);
  }
  n->add_input("output_shape");
  add_initializer(model.mutable_graph(), "output_shape", Tensor::from_int64({1, 2, 5, 4}, {4}));
  expect_composite_differentiates(model, "MaxUnpool", rng);
}

// ReverseSequence (a GatherElements) by finite differences, batch-major, lengths 0 to full.
TEST(CompositeImport, ReverseSequenceDifferentiates) {
  std::mt19937 rng(17);
  expect_composite_differentiates(
      with_indices({"ReverseSequence", {3, 4, 2}, {{"time_axis", 1}, {"batch_axis", 0}}, {}, {}, {}, {{0}}},
                   rng, Tensor::from_int64({4, 2, 0}, {3})),
      "ReverseSequence", rng);
}

// TopK's values (a GatherElements at TopKIndices' positions) by finite differences.
TEST(CompositeImport, TopKValuesDifferentiate) {
  std::mt19937 rng(18);
  expect_composite_differentiates(
      with_indices({"TopK", {3, 5}, {{"axis", 1}}, {}, {}, {}, {{0}}}, rng, Tensor::from_int64({2}, {1})),
      "TopK", rng);
}

// If: the condition folds at import (here Size(x) > 4 on a static shape), the branch taken is
// inlined reading the enclosing graph's x, and a condition known only at run time is refused.
TEST(CompositeImport, IfWithACompileTimeConditionInlinesTheBranchTaken) {
  auto branch = [](const std::string& name, const std::string& op) {
    onnx::GraphProto g;
    g.set_name(name);
    add_node(&g, op, {"x"}, name + "_y", name + "_node");
    g.add_output()->set_name(name + "_y");
    return g;
  };
  auto add_input = [](onnx::GraphProto* g, const std::string& name, int elem_type, const Shape& shape) {
    onnx::ValueInfoProto* v = g->add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    auto* dims = v->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int64_t d : shape) dims->add_dim()->set_dim_value(d);
  };
  auto model_with_cond = [&](bool from_size) {
    onnx::ModelProto model = empty_model("if", 13);
    onnx::GraphProto* g = model.mutable_graph();
    add_input(g, "x", onnx::TensorProto::FLOAT, {2, 3});
    std::string cond = "flag";
    if (from_size) {
      add_node(g, "Size", {"x"}, "n");
      add_initializer(g, "four", Tensor::from_int64({4}, {}));
      add_node(g, "Greater", {"n", "four"}, "big");
      cond = "big";
    } else {
      add_input(g, "flag", onnx::TensorProto::BOOL, {});
    }
    onnx::NodeProto* n = add_node(g, "If", {cond}, "y", "choose");
    for (const auto& [attr, graph] :
         {std::pair{"then_branch", branch("then", "Relu")}, {"else_branch", branch("else", "Neg")}}) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(attr);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = graph;
    }
    g->add_output()->set_name("y");
    return model;
  };
  codegen::CpuEvaluator evaluator;  // folds Size and Greater, as dlc's import does
  frontend::ImportOptions options;
  options.evaluator = &evaluator;
  auto g = frontend::import_onnx_model(model_with_cond(true), ".", options, "if.onnx");
  const ir::Node* y = g->outputs()[0]->producer;  // an Identity giving the branch's result the name y
  ASSERT_TRUE(y && y->op == ir::OpKind::Identity && y->inputs[0]->producer);
  EXPECT_EQ(y->inputs[0]->producer->op, ir::OpKind::Relu);  // Size 6 > 4: the then branch
  EXPECT_EQ(y->inputs[0]->producer->inputs[0]->name, "x");
  for (const ir::Node* n : g->nodes()) EXPECT_NE(n->op, ir::OpKind::Neg);
  try {
    frontend::import_onnx_model(model_with_cond(false), ".", options, "if.onnx");
    ADD_FAILURE() << "an If on a run-time condition was imported";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("node 'choose' (If): input 0 (cond) must be a compile-time constant"),
        std::string::npos)
        << e.what();
  }
}

// Nearest Resize under tf_crop_and_resize: positions outside the region take the extrapolation
// value. W maps output o to 2o - 1.5 (roi -0.5 to 1.5 of [1, 2, 3, 4]): -1.5 and 4.5 lie outside.
TEST(CompositeImport, NearestResizeExtrapolatesOutsideTheCropRegion) {
  onnx::ModelProto model = empty_model("crop", 13);
  onnx::GraphProto* g = model.mutable_graph();
  add_initializer(g, "x", Tensor::from_double(DType::F32, {1, 2, 3, 4}, {1, 1, 1, 4}));
  add_initializer(g, "roi", Tensor::from_double(DType::F32, {0, 0, 0, -0.5, 1, 1, 1, 1.5}, {8}));
  add_initializer(g, "sizes", Tensor::from_int64({1, 1, 1, 4}, {4}));
  onnx::NodeProto* n = add_node(g, "Resize", {"x", "roi", "", "sizes"}, "y", "crop");
  for (const auto& [name, value] :
       {std::pair{"mode", "nearest"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}}) {
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(value);
  }
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name("extrapolation_value");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(9.0f);
  g->add_output()->set_name("y");
  auto session =
      Session::create(codegen::lower_to_plan(*frontend::import_onnx_model(model, ".", {}, "crop.onnx")));
  session->run();
  EXPECT_EQ(session->output("y").as_double(), (std::vector<double>{9, 1, 3, 9}));
}

TEST(CompositeImport, CastLikeCastsToTheSecondInputsType) {
  onnx::ModelProto model = empty_model("cast_like", 15);
  onnx::GraphProto* g = model.mutable_graph();
  add_initializer(g, "x", Tensor::from_double(DType::F32, {-2.75, 0.5, 3.25}, {3}));
  add_initializer(g, "like", Tensor::from_int64({0}, {1}));
  add_node(g, "CastLike", {"x", "like"}, "y", "cast_like");
  g->add_output()->set_name("y");
  auto graph = frontend::import_onnx_model(model, ".", {}, "cast_like.onnx");
  ir::Value* y = graph->outputs()[0];
  ASSERT_NE(y->producer, nullptr);
  EXPECT_EQ(y->producer->op, ir::OpKind::Cast);
  EXPECT_EQ(y->type.dtype, DType::I64);
  auto session = Session::create(codegen::lower_to_plan(*graph));
  session->run();
  EXPECT_EQ(session->output("y").as_int64(), (std::vector<int64_t>{-2, 0, 3}));
}

TEST(CompositeImport, BadAttributesNameTheNode) {
  std::mt19937 rng(13);
  auto error_of = [&](const CompositeCase& c) {
    try {
      frontend::import_onnx_model(one_node_model(c, rng), ".", {}, "bad.onnx");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_of({"DepthToSpace", {1, 6, 2, 2}, {{"blocksize", 2}}, {}})
                .find("node 'node' (DepthToSpace): channels 6"),
            std::string::npos);
  EXPECT_NE(error_of({"SpaceToDepth", {1, 2, 3, 4}, {{"blocksize", 2}}, {}}).find("height 3 and width 4"),
            std::string::npos);
  EXPECT_NE(error_of({"LRN", {1, 2, 3}, {}, {}}).find("attribute 'size' must be positive"),
            std::string::npos);
  EXPECT_NE(error_of({"DepthToSpace", {1, 4, 2}, {{"blocksize", 2}}, {}}).find("expects an input of rank 4"),
            std::string::npos);
  EXPECT_NE(error_of({"LSTM", {3, 2, 4}, {{"hidden_size", 3}}, {}, {}, {}, {{1, 12, 4}, {1, 12, 3}, {1, 23}}})
                .find("node 'node' (LSTM): B must be [1,24], got f64[1,23]"),
            std::string::npos);
  EXPECT_NE(error_of({"GRU",
                      {3, 2, 4},
                      {{"hidden_size", 3}},
                      {},
                      {{"direction", "sideways"}},
                      {},
                      {{1, 9, 4}, {1, 9, 3}}})
                .find("direction must be forward, reverse or bidirectional, got 'sideways'"),
            std::string::npos);
  EXPECT_NE(
      error_of({"Resize", {1, 0, 3}, {}, {}, {}, {1, 2, 3}}).find("cannot resize axis 1 of an empty input"),
      std::string::npos);
  EXPECT_NE(error_of({"Resize", {1, 2, 3}, {}, {}, {}, {1, 2, int64_t(1) << 62}}).find("is too large"),
            std::string::npos);
  EXPECT_NE(error_of({"Resize", {1, 2, 3, 4}, {}, {}, {{"mode", "area"}}, {1, 2, 6, 8}})
                .find("mode 'area' is not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace dlc
