// The textual IR: print -> parse -> print is identical, values and attributes survive exactly,
// and malformed text gives FILE:LINE:COL errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dlc/error.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace dlc::ir {
namespace {

std::string round_trip(const std::string& text) { return print_graph(*parse_graph(text, "t.dlir")); }

// The error message of parsing `text`, or "" if it parses.
std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "t.dlir");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(IrText, PrintsTheDocumentedForm) {
  Graph g;
  Value* x = g.add_input("x", {DType::F32, {2, 3}});
  Value* label = g.add_input("label", {DType::I64, {2}}, Role::Label);
  Value* w = g.add_parameter("onnx::Gemm_1", Tensor::from_double(DType::F32, {0.5, -1, 1e-5, 3}, {2, 2}));
  Value* lo = g.add_constant("lo", Tensor::scalar_f32(0.0f));
  Node* relu = g.add_node(OpKind::Relu, {x}, {}, {"y"}, "relu0");
  Node* clip = g.add_node(OpKind::Clip, {relu->outputs[0], lo, nullptr}, {}, {"z"}, "clip");
  g.set_outputs({clip->outputs[0], label, w});
  EXPECT_EQ(print_graph(g),
            "graph @main {\n"
            "  input %x : f32[2,3]\n"
            "  label %label : i64[2]\n"
            "  param %\"onnx::Gemm_1\" : f32[2,2] = [0.5, -1, 9.99999975e-06, 3]\n"
            "  constant %lo : f32[] = [0]\n"
            "  %y = Relu(%x) : f32[2,3] loc(\"relu0\")\n"
            "  %z = Clip(%y, %lo, _) : f32[2,3] loc(\"clip\")\n"
            "  return %z, %label, %\"onnx::Gemm_1\"\n"
            "}\n");
  EXPECT_EQ(round_trip(print_graph(g)), print_graph(g));
}

TEST(IrText, AttributesOfEveryKindRoundTrip) {
  Attrs a;
  a.set("i", int64_t(-3));
  a.set("f", 1.0);
  a.set("eps", double(1e-5f));
  a.set("big", 1e300);
  a.set("nan", std::numeric_limits<double>::quiet_NaN());
  a.set("ninf", -std::numeric_limits<double>::infinity());
  a.set("s", std::string("quote\" back\\ nl\n tab\t \x01"));
  a.set("ints", std::vector<int64_t>{1, -2});
  a.set("floats", std::vector<double>{1.0, 2.5, -0.0});
  a.set("strings", std::vector<std::string>{"a", ""});
  a.set("empty", std::vector<int64_t>{});
  a.set("t", Tensor::from_int64({1, 2, 3}, {3}));
  Graph g;
  Value* x = g.add_input("x", {DType::F32, {2}});
  Node* n = g.add_node(OpKind::Relu, {x}, a, {"y"}, "r");
  g.set_outputs({n->outputs[0]});
  std::string text = print_graph(g);
  EXPECT_NE(
      text.find("{big = 1e+300, empty = [], eps = 9.999999747378752e-06, f = 1.0, floats = [1.0, 2.5, -0.0], "
                "i = -3, ints = [1, -2], nan = nan, ninf = -inf, "
                "s = \"quote\\\" back\\\\ nl\\n tab\\t \\x01\", strings = [\"a\", \"\"], "
                "t = tensor<i64[3]>[1, 2, 3]}"),
      std::string::npos)
      << text;
  std::unique_ptr<Graph> back = parse_graph(text);
  const Attrs& b = back->nodes()[0]->attrs;
  EXPECT_EQ(b.i("i"), -3);
  EXPECT_TRUE(std::holds_alternative<double>(b.all().at("f")));
  EXPECT_EQ(b.f("f"), 1.0);
  EXPECT_EQ(b.f("eps"), double(1e-5f));
  EXPECT_EQ(b.f("big"), 1e300);
  EXPECT_TRUE(std::isnan(b.f("nan")));
  EXPECT_EQ(b.f("ninf"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(b.s("s"), a.s("s"));
  EXPECT_EQ(b.ints("ints"), a.ints("ints"));
  EXPECT_EQ(b.floats("floats"), a.floats("floats"));
  EXPECT_TRUE(std::signbit(b.floats("floats")[2]));
  EXPECT_EQ(std::get<std::vector<std::string>>(b.all().at("strings")), std::vector<std::string>({"a", ""}));
  EXPECT_TRUE(b.floats("empty").empty());
  EXPECT_EQ(b.tensor("t").type, a.tensor("t").type);
  EXPECT_EQ(b.tensor("t").bytes, a.tensor("t").bytes);
  EXPECT_EQ(print_graph(*back), text);
}

TEST(IrText, TensorDataOfEveryDtypeRoundTrips) {
  Graph g;
  std::vector<double> v = {0.1, -2.5, std::numeric_limits<double>::infinity(), 1e-30, 65504};
  std::vector<Value*> outs;
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16})
    outs.push_back(g.add_parameter(std::string(dtype_name(dt)), Tensor::from_double(dt, v, {5})));
  std::vector<double> ints = {-128, 0, 1, 127, 5};
  for (DType dt : {DType::I64, DType::I32, DType::I8})
    outs.push_back(g.add_constant(std::string(dtype_name(dt)), Tensor::from_double(dt, ints, {5})));
  outs.push_back(g.add_constant("u8", Tensor::from_double(DType::U8, {0, 255}, {2})));
  outs.push_back(g.add_constant("bool", Tensor::from_double(DType::Bool, {1, 0}, {1, 2})));
  outs.push_back(g.add_constant("big", Tensor::from_int64({std::numeric_limits<int64_t>::min(), 1}, {2})));
  outs.push_back(g.add_parameter("nan", Tensor::from_double(DType::F32, {NAN}, {})));
  g.set_outputs(outs);
  std::string text = print_graph(g);
  std::unique_ptr<Graph> back = parse_graph(text);
  ASSERT_EQ(back->initializers().size(), g.initializers().size());
  for (size_t i = 0; i + 1 < g.initializers().size(); ++i)
    EXPECT_EQ(back->initializers()[i]->data->bytes, g.initializers()[i]->data->bytes)
        << g.initializers()[i]->name;
  EXPECT_EQ(print_graph(*back), text);
  EXPECT_NE(
      text.find("param %f64 : f64[5] = [0.10000000000000001, -2.5, inf, 1.0000000000000001e-30, 65504]"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("param %nan : f32[] = [nan]"), std::string::npos) << text;
}

TEST(IrText, MultipleAndAbsentOutputsRolesAndQuotedNames) {
  const std::string text =
      "graph @\"my graph\" {\n"
      "  input %\"in put\" : f32[4]\n"
      "  state %s : f32[4] = [1, 2, 3, 4]\n"
      "  %y, _ = Dropout(%\"in put\") {ratio = 0.25} : f32[4], _ loc(\"drop\")\n"
      "  %a, %b = Dropout(%y) : gradient f32[4], bool[4] loc(\"drop.1\")\n"
      "  %c = Add(%a, %s) : f32[4] loc(\"add\")\n"
      "  return %c, %b\n"
      "}\n";
  EXPECT_EQ(round_trip(text), text);
  std::unique_ptr<Graph> g = parse_graph(text);
  EXPECT_EQ(g->name, "my graph");
  EXPECT_EQ(g->nodes()[0]->outputs.size(), 2u);
  EXPECT_EQ(g->nodes()[0]->outputs[1], nullptr);
  EXPECT_EQ(g->find_value("a")->role, Role::Gradient);
  EXPECT_EQ(g->find_value("s")->role, Role::State);
}

TEST(IrText, CommentsAndChunks) {
  const std::string text =
      "// PASSES: dce\n"
      "graph @main { // trailing\n"
      "  input %x : f32[1]\n"
      "  return %x\n"
      "}\n"
      "// -----\n"
      "graph @second {\n"
      "  input %x : f32[1]\n"
      "  return %x\n"
      "}\n";
  std::vector<TextChunk> chunks = split_chunks(text);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].first_line, 1);
  EXPECT_EQ(chunks[1].first_line, 7);
  EXPECT_EQ(parse_graph(chunks[1].text)->name, "second");
  EXPECT_EQ(parse_error(chunks[1].text + "x"),
            "t.dlir:5:1: expected the end of the input after the graph, got 'x'");
}

TEST(IrText, ElidedDataPrintsButDoesNotParse) {
  Graph g;
  g.set_outputs({g.add_parameter("w", Tensor::scalar_f32(1.0f, {100}))});
  std::string text = print_graph(g, {.elide_above = 10});
  EXPECT_NE(text.find("param %w : f32[100] = <elided 100 elements>"), std::string::npos) << text;
  EXPECT_EQ(parse_error(text), "t.dlir:2:25: elided tensor data cannot be parsed, got '<'");
}

TEST(IrText, ParseErrorsNameFileLineAndColumn) {
  const std::string head = "graph @main {\n  input %x : f32[2]\n";
  EXPECT_EQ(parse_error(head + "  %y = Relu(%z) : f32[2] loc(\"r\")\n  return %y\n}\n"),
            "t.dlir:3:13: use of undefined value %z");
  EXPECT_EQ(parse_error(head + "  %y = Frob(%x) : f32[2] loc(\"r\")\n  return %y\n}\n"),
            "t.dlir:3:8: unknown op 'Frob', got 'Frob'");
  EXPECT_EQ(parse_error(head + "  %y = Relu(%x) : f32[3] loc(\"r\")\n  return %y\n}\n"),
            "t.dlir:3:19: type of %y is f32[3] but inference gives f32[2]");
  EXPECT_EQ(parse_error(head + "  %y = Add(%x) : f32[2] loc(\"r\")\n  return %y\n}\n"),
            "t.dlir:3:8: node 'r' (Add): takes 2..2 inputs, got 1");
  EXPECT_EQ(parse_error(head + "  %x = Relu(%x) : f32[2] loc(\"r\")\n  return %x\n}\n"),
            "t.dlir:3:3: redefinition of value %x");
  EXPECT_EQ(parse_error(head + "  constant %c : i64[2] = [1]\n  return %x\n}\n"),
            "t.dlir:3:26: i64[2] holds 2 elements but 1 are given");
  EXPECT_EQ(parse_error(head + "  constant %c : i8[1] = [300]\n  return %x\n}\n"),
            "t.dlir:3:26: 300 is out of range for i8");
  EXPECT_EQ(parse_error(head + "  constant %c : i64[1] = [1.5]\n  return %x\n}\n"),
            "t.dlir:3:27: expected an integer, got '1.5'");
  EXPECT_EQ(parse_error(
                head +
                "  %y = Relu(%x) : f32[2] loc(\"r\")\n  %z = Relu(%y) : f32[2] loc(\"r\")\n  return %z\n}\n"),
            "t.dlir:4:30: duplicate node name 'r'");
  EXPECT_EQ(parse_error(head + "  %y = Relu(%x) {s = \"a\\q\"} : f32[2] loc(\"r\")\n  return %y\n}\n"),
            "t.dlir:3:25: unknown escape '\\q'");
  EXPECT_EQ(parse_error(head + "  return %x\n"), "t.dlir:4:1: expected '}' (got the end of the input)");
  EXPECT_EQ(parse_error("graph @main {\n  input %x : q7[2]\n  return %x\n}\n"),
            "t.dlir:2:14: unknown element type, got 'q7'");
  EXPECT_EQ(parse_error("graph @main {\n  input %x : f32[2] $\n}\n"),
            "t.dlir:2:21: unexpected character '$'");
}

}  // namespace
}  // namespace dlc::ir
