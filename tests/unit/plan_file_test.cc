// Plan validation: a plan that parses but names a kernel with the wrong number of operands is
// rejected before any kernel can index past its inputs.
#include "runtime/plan/plan_file.h"

#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "dlc/error.h"
#include "ir/graph.h"

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

}  // namespace
}  // namespace dlc
