// Buffer sharing in lowering (codegen/buffer_aliases.h): in-place state updates drop their copy
// step only where the old value has no later reader, Reshape becomes a view of its operand, and
// plans with and without the sharing compute the same bits.
#include "codegen/buffer_aliases.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "codegen/lower.h"
#include "dlc/session.h"
#include "tests/unit/training_test_util.h"

namespace dlc::codegen {
namespace {

using test::random_normal;

constexpr AliasOptions kNoSharing{false, false};

int count_steps(const plan::Plan& p, const std::string& kernel) {
  int n = 0;
  for (const plan::Step& s : p.stages(0).steps()) n += s.kernel() == kernel;
  return n;
}

int buffer_index(const plan::Plan& p, const std::string& name) {
  for (int i = 0; i < p.stages(0).buffers_size(); ++i)
    if (p.stages(0).buffers(i).name() == name) return i;
  ADD_FAILURE() << "no buffer " << name;
  return -1;
}

int64_t offset_of(const plan::Plan& p, const std::string& name) {
  return p.stages(0).buffers(buffer_index(p, name)).offset();
}

// Runs the plan `runs` times on x, returns the outputs of the last run and every state after.
std::map<std::string, Tensor> run(const plan::Plan& p, const Tensor& x, int runs) {
  auto s = Session::create(p, {1});
  std::map<std::string, Tensor> got;
  for (int k = 0; k < runs; ++k) {
    s->set_input("x", x);
    s->run();
  }
  for (const Session::Signature& o : s->outputs()) got["out:" + o.name] = s->output(o.name);
  for (const std::string& name : s->state_names()) got["state:" + name] = s->read_state(name);
  return got;
}

void expect_same_bits(const ir::Graph& g, const Tensor& x, int runs) {
  const std::map<std::string, Tensor> plain = run(lower_to_plan(g, {"cpu", kNoSharing}), x, runs);
  const std::map<std::string, Tensor> shared = run(lower_to_plan(g), x, runs);
  ASSERT_EQ(plain.size(), shared.size());
  for (const auto& [name, value] : plain) EXPECT_EQ(value, shared.at(name)) << name;
}

// s [4] (state), x [4] input; the new s = s + x is produced by an Add.
struct StateGraph {
  ir::Graph g;
  ir::Value *x, *s, *next;
  StateGraph() {
    x = g.add_input("x", TensorType{DType::F32, {4}});
    s = g.add_parameter("s", random_normal({4}, 7), ir::Role::State);
    next = g.add_node(ir::OpKind::Add, {s, x}, {}, {"s.next"})->outputs[0];
    g.add_state_update(next, s);
  }
};

TEST(InPlaceStateUpdate, AddWritesTheStateBuffer) {
  StateGraph t;
  t.g.add_output(t.g.add_node(ir::OpKind::Relu, {t.next}, {}, {"y"})->outputs[0]);
  const BufferAliases a = plan_buffer_aliases(t.g, {});
  EXPECT_TRUE(a.in_place_states.count(t.s));
  const plan::Plan p = lower_to_plan(t.g);
  EXPECT_EQ(count_steps(p, "Identity"), 0);
  EXPECT_EQ(offset_of(p, "s.next"), offset_of(p, "s"));
  expect_same_bits(t.g, random_normal({4}, 8), 3);
}

TEST(InPlaceStateUpdate, NotWhenTheOldValueIsReadAfter) {
  StateGraph t;
  // Mul reads the old s after the Add has produced the new one: the copy stays.
  t.g.add_output(t.g.add_node(ir::OpKind::Mul, {t.s, t.next}, {}, {"y"})->outputs[0]);
  EXPECT_TRUE(plan_buffer_aliases(t.g, {}).in_place_states.empty());
  const plan::Plan p = lower_to_plan(t.g);
  EXPECT_EQ(count_steps(p, "Identity"), 1);
  EXPECT_NE(offset_of(p, "s.next"), offset_of(p, "s"));
  expect_same_bits(t.g, random_normal({4}, 8), 3);
}

TEST(InPlaceStateUpdate, NotWhenTheProducerReadsTheStateOtherwise) {
  // new s = s @ w reads all of s for every element: MatMul may not write over it.
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 2}});
  ir::Value* s = g.add_parameter("s", random_normal({2, 2}, 7), ir::Role::State);
  ir::Value* next = g.add_node(ir::OpKind::MatMul, {s, x}, {}, {"s.next"})->outputs[0];
  g.add_state_update(next, s);
  g.add_output(g.add_node(ir::OpKind::Relu, {next}, {}, {"y"})->outputs[0]);
  EXPECT_TRUE(plan_buffer_aliases(g, {}).in_place_states.empty());
  expect_same_bits(g, random_normal({2, 2}, 8), 3);
}

TEST(InPlaceStateUpdate, NotForGraphOutputsOrASecondStateOfTheSameValue) {
  StateGraph t;
  ir::Value* s2 = t.g.add_parameter("s2", random_normal({4}, 9), ir::Role::State);
  t.g.add_state_update(t.next, s2);  // s2 takes the same new value
  const BufferAliases a = plan_buffer_aliases(t.g, {});
  EXPECT_EQ(a.in_place_states, std::set<const ir::Value*>{t.s});
  t.g.add_output(t.next);
  EXPECT_TRUE(plan_buffer_aliases(t.g, {}).in_place_states.empty());
  expect_same_bits(t.g, random_normal({4}, 8), 3);
}

TEST(InPlaceStateUpdate, NotWhenTheStateIsCopiedIntoAnother) {
  // s2 takes s's old value (a copy step at the end), so s must keep its old bytes until then.
  StateGraph t;
  ir::Value* s2 = t.g.add_parameter("s2", random_normal({4}, 9), ir::Role::State);
  t.g.add_state_update(t.s, s2);
  t.g.add_output(t.g.add_node(ir::OpKind::Relu, {t.next}, {}, {"y"})->outputs[0]);
  EXPECT_TRUE(plan_buffer_aliases(t.g, {}).in_place_states.empty());
  expect_same_bits(t.g, random_normal({4}, 8), 3);
}

TEST(InPlaceStateUpdate, GatedUpdateWritesTheStateBuffer) {
  // new s = Where(apply, s + x, s), as gradient accumulation and loss scaling gate an update: the
  // Where writes its result over the old s element by element, so no copy step follows.
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {4}});
  ir::Value* apply = g.add_input("apply", TensorType{DType::Bool, {}});
  ir::Value* s = g.add_parameter("s", random_normal({4}, 7), ir::Role::State);
  ir::Value* sum = g.add_node(ir::OpKind::Add, {s, x}, {}, {"sum"})->outputs[0];
  g.add_state_update(g.add_node(ir::OpKind::Where, {apply, sum, s}, {}, {"s.next"})->outputs[0], s);
  g.add_output(g.add_node(ir::OpKind::Relu, {sum}, {}, {"y"})->outputs[0]);
  EXPECT_TRUE(plan_buffer_aliases(g, {}).in_place_states.count(s));
  const plan::Plan shared = lower_to_plan(g), plain = lower_to_plan(g, {"cpu", kNoSharing});
  EXPECT_EQ(count_steps(shared, "Identity"), 0);
  EXPECT_EQ(count_steps(plain, "Identity"), 1);
  EXPECT_EQ(offset_of(shared, "s.next"), offset_of(shared, "s"));
  Tensor got[2];
  for (int k = 0; k < 2; ++k) {
    auto session = Session::create(k ? shared : plain, {1});
    for (const bool applied : {true, false, false, true}) {
      session->set_input("x", random_normal({4}, 8));
      session->set_input("apply", Tensor::from_double(DType::Bool, {applied ? 1.0 : 0.0}, {}));
      session->run();
    }
    got[k] = session->read_state("s");
  }
  EXPECT_EQ(got[0], got[1]);
  EXPECT_NE(got[0], random_normal({4}, 7)) << "two applied steps changed s";
}

TEST(InPlaceStateUpdate, OptimizersTrainBitForBitWithoutCopies) {
  for (const char* kind : {"sgd", "adam", "rmsprop"}) {
    passes::OptimizerOptions opt;
    opt.kind = kind;
    opt.momentum = 0.9;
    opt.centered = std::string(kind) == "rmsprop";
    const std::unique_ptr<ir::Graph> g = test::mlp_training_graph(4, opt);
    const plan::Plan shared = lower_to_plan(*g), plain = lower_to_plan(*g, {"cpu", kNoSharing});
    EXPECT_EQ(count_steps(shared, "Identity"), 0) << kind;
    EXPECT_EQ(count_steps(plain, "Identity"), int(g->state_updates().size())) << kind;
    std::map<std::string, Tensor> got[2];
    for (int k = 0; k < 2; ++k) {
      auto s = Session::create(k ? shared : plain, {1});
      for (int step = 1; step <= 3; ++step) {
        const std::map<std::string, Tensor> feed = {{"x", random_normal({4, 5}, 11)},
                                                    {"label", Tensor::from_int64({0, 2, 1, 2}, {4})},
                                                    {"lr", Tensor::scalar_f32(0.05f)},
                                                    {"step", Tensor::scalar_f32(float(step))}};
        for (const Session::Signature& in : s->inputs()) s->set_input(in.name, feed.at(in.name));
        s->run();
        got[k]["loss " + std::to_string(step)] = s->output(s->outputs().at(0).name);
      }
      for (const std::string& name : s->state_names()) got[k][name] = s->read_state(name);
    }
    for (const auto& [name, value] : got[0]) EXPECT_EQ(value, got[1].at(name)) << kind << " " << name;
  }
}

TEST(ReshapeView, SharesItsOperandsBytesWithoutAStep) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 6}});
  ir::Value* h = g.add_node(ir::OpKind::Relu, {x}, {}, {"h"})->outputs[0];
  Attrs shape;
  shape.set("shape", std::vector<int64_t>{3, 4});
  ir::Value* r = g.add_node(ir::OpKind::Reshape, {h}, shape, {"r"})->outputs[0];
  g.add_output(g.add_node(ir::OpKind::Neg, {r}, {}, {"y"})->outputs[0]);
  g.add_output(h);  // h stays live to the end with its view
  const plan::Plan p = lower_to_plan(g);
  EXPECT_EQ(count_steps(p, "Reshape"), 0);
  EXPECT_EQ(p.stages(0).steps_size(), 2);
  EXPECT_EQ(offset_of(p, "r"), offset_of(p, "h"));
  EXPECT_EQ(count_steps(lower_to_plan(g, {"cpu", kNoSharing}), "Reshape"), 1);
  expect_same_bits(g, random_normal({2, 6}, 3), 1);
}

TEST(ReshapeView, NotOfAStateThatIsUpdated) {
  // The view would be read after the in-place Add has overwritten s.
  StateGraph t;
  Attrs shape;
  shape.set("shape", std::vector<int64_t>{2, 2});
  ir::Value* r = t.g.add_node(ir::OpKind::Reshape, {t.s}, shape, {"r"})->outputs[0];
  t.g.add_output(t.g.add_node(ir::OpKind::Neg, {r}, {}, {"y"})->outputs[0]);
  const BufferAliases a = plan_buffer_aliases(t.g, {});
  EXPECT_TRUE(a.views.empty());
  EXPECT_EQ(count_steps(lower_to_plan(t.g), "Reshape"), 1);
  expect_same_bits(t.g, random_normal({4}, 8), 3);
}

}  // namespace
}  // namespace dlc::codegen
