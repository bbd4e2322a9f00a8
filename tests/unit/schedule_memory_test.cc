// The scheduling pass (passes/schedule_memory.h) on small graphs, measured by lowering itself:
// a reorder that lowers the peak (exact figures), an order that is already best (no change), and
// a state written in place whose old value's reader stays before the writer; and the graph's
// reorder_nodes, which takes only a permutation of the nodes, is_pinned and rename_node.
#include "passes/schedule_memory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/lower.h"
#include "codegen/plan_memory_model.h"
#include "dlc/error.h"
#include "tests/unit/training_test_util.h"

namespace dlc::passes {
namespace {

using test::random_normal;

const TensorType kVec{DType::F32, {256}};  // 1024 bytes

std::vector<std::string> node_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const ir::Node* n : g.nodes()) names.push_back(n->name);
  return names;
}

ir::Value* add(ir::Graph& g, ir::OpKind op, std::vector<ir::Value*> inputs, const std::string& name) {
  return g.add_node(op, std::move(inputs), {}, {name}, name)->outputs[0];
}

int64_t lowered_peak(const ir::Graph& g) { return codegen::lower_to_plan(g).stages(0).peak_bytes(); }

struct Scheduled {
  bool changed;
  std::map<std::string, int64_t> stats;
};

Scheduled schedule(ir::Graph& g) {
  const codegen::PlanMemoryModel model({});
  ScheduleMemory pass(model);
  const bool changed = pass.run(g);
  return {changed, pass.stats()};
}

TEST(ScheduleMemory, ReductionRunsBeforeTheNextBranch) {
  // Two 1 KiB branches of x, each summed: summing the first before computing the second keeps
  // one branch live instead of two.
  ir::Graph g;
  ir::Value* x = g.add_input("x", kVec);
  ir::Value* a = add(g, ir::OpKind::Relu, {x}, "a");
  ir::Value* b = add(g, ir::OpKind::Neg, {x}, "b");
  ir::Value* sa = add(g, ir::OpKind::ReduceSum, {a}, "sa");
  ir::Value* sb = add(g, ir::OpKind::ReduceSum, {b}, "sb");
  g.add_output(add(g, ir::OpKind::Add, {sa, sb}, "y"));
  // x (1024, live throughout) + a + b + sa at the first ReduceSum.
  EXPECT_EQ(lowered_peak(g), 1024 + 1024 + 1024 + 4);
  const Scheduled s = schedule(g);
  EXPECT_TRUE(s.changed);
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"a", "sa", "b", "sb", "y"}));
  // x + sa + b + sb at the second ReduceSum.
  EXPECT_EQ(lowered_peak(g), 1024 + 4 + 1024 + 4);
  EXPECT_EQ(s.stats.at("peak_before"), 3076);
  EXPECT_EQ(s.stats.at("peak_after"), 2056);
  EXPECT_EQ(s.stats.at("arena_before"), 3136);
  EXPECT_EQ(s.stats.at("arena_after"), 2176);
  EXPECT_EQ(s.stats.at("nodes_moved"), 1);
  EXPECT_EQ(codegen::lower_to_plan(g).stages(0).arena_bytes(), 2176);
}

TEST(ScheduleMemory, LeavesABestOrderAsItIs) {
  // A chain: every order is this one.
  ir::Graph g;
  ir::Value* x = g.add_input("x", kVec);
  ir::Value* a = add(g, ir::OpKind::Relu, {x}, "a");
  ir::Value* b = add(g, ir::OpKind::Neg, {a}, "b");
  ir::Value* sa = add(g, ir::OpKind::ReduceSum, {b}, "s");
  g.add_output(sa);
  // Two branches already summed one after the other.
  ir::Value* c = add(g, ir::OpKind::Exp, {x}, "c");
  g.add_output(add(g, ir::OpKind::ReduceSum, {c}, "t"));
  const std::vector<std::string> before = node_names(g);
  const Scheduled s = schedule(g);
  EXPECT_FALSE(s.changed);
  EXPECT_EQ(node_names(g), before);
  EXPECT_EQ(s.stats.at("peak_before"), s.stats.at("peak_after"));
  EXPECT_EQ(s.stats.at("arena_before"), s.stats.at("arena_after"));
  EXPECT_EQ(s.stats.at("nodes_moved"), 0);
}

TEST(ScheduleMemory, ReaderOfAStateStaysBeforeItsInPlaceWriter) {
  // s.next = s + x is written over s (in place), so m = s * x must run first; the Add frees
  // nothing and allocates nothing, so without that rule it would run first and cost s.next its
  // own buffer and a copy step.
  ir::Graph g;
  ir::Value* x = g.add_input("x", kVec);
  ir::Value* s = g.add_parameter("s", random_normal({256}, 3), ir::Role::State);
  ir::Value* m = add(g, ir::OpKind::Mul, {s, x}, "m");
  ir::Value* a = add(g, ir::OpKind::Relu, {x}, "a");
  ir::Value* sa = add(g, ir::OpKind::ReduceSum, {a}, "sa");
  ir::Value* sm = add(g, ir::OpKind::ReduceSum, {m}, "sm");
  g.add_state_update(add(g, ir::OpKind::Add, {s, x}, "s.next"), s);
  g.add_output(add(g, ir::OpKind::Add, {sa, sm}, "y"));
  // x and s (2048) + m + a + sa at sa's step.
  EXPECT_EQ(lowered_peak(g), 2048 + 1024 + 1024 + 4);
  const Scheduled st = schedule(g);
  EXPECT_TRUE(st.changed);
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"m", "sm", "s.next", "a", "sa", "y"}));
  // x and s + a + sm + sa at sa's step.
  EXPECT_EQ(st.stats.at("peak_after"), 2048 + 1024 + 4 + 4);
  const plan::Plan p = codegen::lower_to_plan(g);
  EXPECT_EQ(p.stages(0).peak_bytes(), 3080);
  for (const plan::Step& step : p.stages(0).steps()) EXPECT_NE(step.kernel(), "Identity");  // in place
}

TEST(GraphReorder, TakesOnlyAPermutationOfTheNodes) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", kVec);
  add(g, ir::OpKind::Relu, {x}, "a");
  add(g, ir::OpKind::Neg, {x}, "b");
  const std::vector<ir::Node*> nodes = g.nodes();
  EXPECT_THROW(g.reorder_nodes({nodes[0]}), Error);
  EXPECT_THROW(g.reorder_nodes({nodes[0], nodes[0]}), Error);
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"a", "b"}));  // unchanged after a refusal
  g.reorder_nodes({nodes[1], nodes[0]});
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"b", "a"}));
}

TEST(GraphPinned, OutputsAndStateUpdateValuesFollowReplacement) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", kVec);
  ir::Value* w = g.add_parameter("w", Tensor::from_double(DType::F32, {1, 2, 3, 4}, {4}));
  ir::Value* a = add(g, ir::OpKind::Relu, {x}, "a");
  ir::Value* b = add(g, ir::OpKind::Neg, {a}, "b");
  ir::Value* c = add(g, ir::OpKind::Neg, {w}, "c");
  g.add_output(b);
  g.add_state_update(c, w);
  EXPECT_FALSE(g.is_pinned(a));
  EXPECT_TRUE(g.is_pinned(b));
  EXPECT_TRUE(g.is_pinned(c));
  EXPECT_FALSE(g.is_pinned(w));
  ir::Value* d = add(g, ir::OpKind::Exp, {w}, "d");
  g.replace_all_uses(c, d);  // the state update now takes d
  EXPECT_FALSE(g.is_pinned(c));
  EXPECT_TRUE(g.is_pinned(d));
}

TEST(GraphRenameNode, RefusesATakenName) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", kVec);
  ir::Node* a = add(g, ir::OpKind::Relu, {x}, "a")->producer;
  add(g, ir::OpKind::Neg, {x}, "b");
  EXPECT_THROW(g.rename_node(a, "b"), Error);
  g.rename_node(a, "c");
  EXPECT_EQ(node_names(g), (std::vector<std::string>{"c", "b"}));
  EXPECT_EQ(g.add_node(ir::OpKind::Exp, {x}, {}, {""}, "a")->name, "a");  // "a" is free again
}

}  // namespace
}  // namespace dlc::passes
