// Plan validation: a plan that parses but names a kernel with the wrong number of operands is
// rejected before any kernel can index past its inputs.
#include "runtime/plan/plan_file.h"

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "dlc/error.h"
#include "dlc/session.h"
#include "ir/graph.h"
#include "runtime/plan/plan_values.h"

namespace dlc {
namespace {

plan::Plan relu_plan() {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {4}});
  ir::Node* n = g.add_node(ir::OpKind::Relu, {x}, {}, {"y"}, "relu");
  g.set_outputs({n->outputs[0]});
  return codegen::lower_to_plan(g);
}

TEST(PlanFile, ValidPlanPasses) { EXPECT_NO_THROW(plan::validate_plan(relu_plan(), "relu.dlcplan")); }

// Version 1 plans (all initial values as bytes) still load; a newer version is refused by name.
TEST(PlanFile, ReadsFormatVersionsOneAndTwo) {
  plan::Plan p = relu_plan();
  EXPECT_EQ(p.format_version(), kPlanFormatVersion);
  p.set_format_version(1);
  EXPECT_NO_THROW(plan::validate_plan(p, "relu.dlcplan"));
  p.set_format_version(kPlanFormatVersion + 1);
  try {
    plan::validate_plan(p, "relu.dlcplan");
    FAIL() << "accepted a newer format";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("plan format version 3 (this dlc reads versions 1 to 2)"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanFile, StepWithTooManyInputsIsRejected) {
  plan::Plan p = relu_plan();
  plan::Step* step = p.mutable_stages(0)->mutable_steps(0);
  step->add_inputs(step->inputs(0));
  try {
    plan::validate_plan(p, "relu.dlcplan");
    FAIL() << "accepted Relu with two inputs";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gives kernel 'Relu' 2 inputs and 1 outputs"), std::string::npos)
        << e.what();
  }
}

TEST(PlanFile, StepWithoutOutputsIsRejected) {
  plan::Plan p = relu_plan();
  p.mutable_stages(0)->mutable_steps(0)->clear_outputs();
  EXPECT_THROW(plan::validate_plan(p, "relu.dlcplan"), Error);
}

// An all-zero initial value (an optimizer state) is stored as a flag, not as bytes, and reads back
// as zeros; a zero flag with bytes, or neither flag nor enough bytes, is rejected.
TEST(PlanValues, ZeroTensorsStoreNoBytes) {
  const Tensor zeros(TensorType{DType::F32, {3, 5}});
  plan::TensorValue v;
  plan::to_proto(zeros, &v);
  EXPECT_TRUE(v.zeros());
  EXPECT_TRUE(v.data().empty());
  EXPECT_EQ(plan::from_proto(v, "m"), zeros);
  std::vector<float> host(15, 7.0f);
  plan::copy_value(v, host.data());
  EXPECT_EQ(host, std::vector<float>(15, 0.0f));

  const Tensor ones = Tensor::from_double(DType::F32, std::vector<double>(15, 1.0), {3, 5});
  plan::TensorValue w;
  plan::to_proto(ones, &w);
  EXPECT_FALSE(w.zeros());
  EXPECT_EQ(plan::from_proto(w, "w"), ones);

  w.set_zeros(true);
  EXPECT_THROW(plan::from_proto(w, "w"), Error);  // zeros, yet 60 bytes
  v.set_zeros(false);
  EXPECT_THROW(plan::from_proto(v, "m"), Error);  // no bytes for 15 floats
}

// A plan stores a zero state (as Adam's moments start) as a flag; a parameter keeps its bytes.
TEST(PlanValues, PlansStoreZeroStatesAsFlags) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {4}});
  ir::Value* w = g.add_parameter("w", Tensor::from_double(DType::F32, {1, 2, 3, 4}, {4}));
  ir::Value* m = g.add_parameter("m", Tensor(TensorType{DType::F32, {4}}), ir::Role::State);
  ir::Node* n = g.add_node(ir::OpKind::Mul, {x, w}, {}, {"y"}, "mul");
  ir::Node* u = g.add_node(ir::OpKind::Add, {m, n->outputs[0]}, {}, {"m_next"}, "add");
  g.add_state_update(u->outputs[0], m);
  g.set_outputs({n->outputs[0]});
  const plan::Plan p = codegen::lower_to_plan(g);
  int zeros = 0, stored = 0;
  for (const plan::TensorValue& v : p.initial_values()) (v.zeros() ? zeros : stored) += 1;
  EXPECT_EQ(zeros, 1);
  EXPECT_EQ(stored, 1);
  EXPECT_NO_THROW(plan::validate_plan(p, "adam.dlcplan"));
}

}  // namespace
}  // namespace dlc
