// Graph edits passes share: replace_node hands a node's readers, graph outputs and state updates
// to values made elsewhere, removes the node and gives the results the outputs' names.
#include <gtest/gtest.h>

#include "dlc/error.h"
#include "ir/graph.h"
#include "ir/printer.h"

namespace dlc::ir {
namespace {

TEST(GraphEdit, ReplaceNodeMovesReadersAndKeepsOutputNames) {
  Graph g;
  Value* x = g.add_input("x", {DType::F32, {4}});
  Node* relu = g.add_node(OpKind::Relu, {x}, {}, {"y"}, "relu");
  Node* neg = g.add_node(OpKind::Neg, {relu->outputs[0]}, {}, {"z"}, "neg");
  g.set_outputs({relu->outputs[0], neg->outputs[0]});
  g.set_insertion_point(relu);
  Value* replacement = g.add_node(OpKind::Abs, {x}, {}, {"y.abs"}, "abs")->outputs[0];
  g.clear_insertion_point();

  g.replace_node(relu, {replacement});
  EXPECT_EQ(replacement->name, "y");
  EXPECT_EQ(g.find_value("y"), replacement);
  EXPECT_EQ(g.find_value("y.abs"), nullptr);
  EXPECT_EQ(neg->inputs[0], replacement);
  EXPECT_EQ(g.outputs()[0], replacement);
  EXPECT_EQ(print_graph(g),
            "graph @main {\n"
            "  input %x : f32[4]\n"
            "  %y = Abs(%x) : f32[4] loc(\"abs\")\n"
            "  %z = Neg(%y) : f32[4] loc(\"neg\")\n"
            "  return %y, %z\n"
            "}\n");
}

TEST(GraphEdit, ReplaceNodeSkipsUnreadOutputsAndRefusesReadOnes) {
  Graph g;
  Value* x = g.add_input("x", {DType::F32, {2, 3}});
  Attrs attrs;
  attrs.set("axis", int64_t(1));
  attrs.set("split", std::vector<int64_t>{1, 1, 1});
  Node* split = g.add_node(OpKind::Split, {x}, attrs, {"a", "b", "c"}, "split");
  Node* reader = g.add_node(OpKind::Relu, {split->outputs[1]}, {}, {"r"}, "reader");
  g.set_outputs({split->outputs[0], reader->outputs[0]});
  Value* a2 = g.add_node(OpKind::Neg, {x}, {}, {"a2"}, "neg")->outputs[0];

  // Output 1 is read and has no result: refused, and nothing changed.
  EXPECT_THROW(g.replace_node(split, {a2}), Error);
  EXPECT_EQ(g.outputs()[0], split->outputs[0]);
  EXPECT_EQ(a2->name, "a2");

  g.remove_node(reader);
  g.set_outputs({split->outputs[0]});
  g.replace_node(split, {a2, nullptr});  // b and c are unread now
  EXPECT_EQ(a2->name, "a");
  EXPECT_EQ(g.outputs()[0], a2);
  EXPECT_EQ(g.num_nodes(), 1u);
}

}  // namespace
}  // namespace dlc::ir
