// plan::StageBindings: a stage's buffers by the names a session is asked for.
#include "runtime/plan/stage_bindings.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "dlc/error.h"

namespace dlc::plan {
namespace {

// Buffers: 0 weight (parameter), 1 x (input), 2 steps (state), 3 y (label), 4 a temporary,
// 5 loss (output).
Plan small_plan() {
  Plan p;
  Stage* st = p.add_stages();
  const struct {
    const char* name;
    Buffer::Kind kind;
    int64_t dim;
  } buffers[] = {{"weight", Buffer::PARAMETER, 4}, {"x", Buffer::INPUT, 2},
                 {"steps", Buffer::STATE, 1},      {"y", Buffer::INPUT, 3},
                 {"t", Buffer::ACTIVATION, 8},     {"loss", Buffer::ACTIVATION, 1}};
  int64_t offset = 0;
  for (const auto& b : buffers) {
    Buffer* buffer = st->add_buffers();
    buffer->set_name(b.name);
    buffer->set_kind(b.kind);
    buffer->set_dtype(int32_t(DType::F32));
    buffer->add_dims(b.dim);
    buffer->set_offset(offset);
    buffer->set_init(-1);
    offset += 64;
  }
  auto bind = [](Binding* binding, const char* name, int buffer) {
    binding->set_name(name);
    binding->set_buffer(buffer);
  };
  bind(p.add_labels(), "y", 3);
  bind(p.add_inputs(), "x", 1);
  bind(p.add_outputs(), "loss", 5);
  return p;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(StageBindings, NamesInputsLabelsOutputsAndState) {
  const StageBindings b(small_plan());
  ASSERT_EQ(b.inputs().size(), 2u);  // the inputs, then the labels
  EXPECT_EQ(b.inputs()[0].name, "x");
  EXPECT_EQ(b.inputs()[1].name, "y");
  EXPECT_EQ(b.inputs()[1].type.str(), "f32[3]");
  ASSERT_EQ(b.outputs().size(), 1u);
  EXPECT_EQ(b.outputs()[0].name, "loss");
  EXPECT_EQ(b.state_names(), (std::vector<std::string>{"weight", "steps"}));
  EXPECT_EQ(b.input_buffer("y"), 3);
  EXPECT_EQ(b.output_buffer("loss"), 5);
  EXPECT_EQ(b.state_buffer("steps"), 2);
  EXPECT_EQ(b.offset(4), 256);
  EXPECT_EQ(b.type(4).str(), "f32[8]");

  EXPECT_EQ(error_of([&] { b.input_buffer("loss"); }), "unknown input 'loss'");
  EXPECT_EQ(error_of([&] { b.output_buffer("x"); }), "unknown output 'x'");
  EXPECT_EQ(error_of([&] { b.state_buffer("t"); }), "the plan has no parameter or state named 't'");
  EXPECT_EQ(error_of([&] { b.check_type(0, Tensor(TensorType{DType::F32, {4}}), "state 'weight'"); }), "");
  EXPECT_EQ(error_of([&] {
              b.check_type(0, Tensor(TensorType{DType::F32, {3}}), "state 'weight'");
            }),
            "state 'weight': expected f32[4], got f32[3]");
}

}  // namespace
}  // namespace dlc::plan
