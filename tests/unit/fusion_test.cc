// The fusion pass and the FusedElementwise CPU kernel against the unfused ops: each case builds
// the same IR graph twice, fuses one, runs both on the CPU runtime and compares every output bit
// for bit — over broadcasting operands, f16/bf16 storage, backward ops, several outputs and
// tensors large enough for the parallel path. The fused graph also round-trips through the
// textual IR and the plan file.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <random>

#include <unistd.h>

#include "codegen/lower.h"
#include "dlc/error.h"
#include "dlc/expr_program.h"
#include "dlc/session.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/fused_program.h"
#include "passes/fusion.h"
#include "runtime/plan/plan_file.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc {
namespace {

using ir::OpKind;
using Build = std::function<void(ir::Graph&)>;

// Random inputs by name (booleans alternate), the same for every run of a case.
std::map<std::string, Tensor> inputs_for(const ir::Graph& g) {
  std::map<std::string, Tensor> out;
  uint32_t seed = 1;
  for (const ir::Value* v : g.inputs()) {
    std::mt19937 rng(seed++);
    std::uniform_real_distribution<double> dist(-2.0, 2.0);
    std::vector<double> values(size_t(v->type.numel()));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = v->type.dtype == DType::Bool ? double(i % 3 == 0) : dist(rng);
    out[v->name] = Tensor::from_double(v->type.dtype, values, v->type.shape);
  }
  return out;
}

std::vector<Tensor> run_plan(const plan::Plan& plan, const std::map<std::string, Tensor>& inputs,
                             int threads) {
  std::unique_ptr<Session> s = Session::create(plan, {threads});
  for (const auto& [name, value] : inputs) s->set_input(name, value);
  s->run();
  std::vector<Tensor> outs;
  for (const Session::Signature& o : s->outputs()) outs.push_back(s->output(o.name));
  return outs;
}

int count(const ir::Graph& g, OpKind op) {
  int n = 0;
  for (const ir::Node* node : g.nodes()) n += node->op == op;
  return n;
}

// Fuses a copy of the graph `build` makes; expects `groups` groups, of which `merged` were
// merged into their reader by rematerialization, and the outputs of the unfused graph, bit for
// bit (with 1 and 2 threads), also after the textual IR and a plan file.
void check_fusion(const Build& build, int64_t groups, int64_t merged = 0) {
  ir::Graph plain, fused;
  build(plain);
  build(fused);
  passes::Fusion fusion;
  EXPECT_EQ(fusion.run(fused), groups > 0);
  ir::verify(fused);
  EXPECT_EQ(fusion.stats().at("groups"), groups) << ir::print_graph(fused);
  // A group may have become a FusedReduce with the reduction of one of its results.
  EXPECT_EQ(fusion.stats().at("producers_merged"), merged);
  EXPECT_EQ(count(fused, OpKind::FusedElementwise) + count(fused, OpKind::FusedReduce), groups - merged);

  const std::map<std::string, Tensor> inputs = inputs_for(plain);
  const std::vector<Tensor> want = run_plan(codegen::lower_to_plan(plain), inputs, 1);
  const plan::Plan fused_plan = codegen::lower_to_plan(fused);
  for (int threads : {1, 2}) {
    const std::vector<Tensor> got = run_plan(fused_plan, inputs, threads);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i], want[i]) << "output " << i << ", " << threads << " threads";
  }

  // The program survives the textual IR and the plan file.
  const std::string text = ir::print_graph(fused);
  std::unique_ptr<ir::Graph> reparsed = ir::parse_graph(text);
  EXPECT_EQ(ir::print_graph(*reparsed), text);
  // One file per process and test: ctest runs the cases of this file in parallel.
  const std::string path = (std::filesystem::temp_directory_path() /
                            fmt::format("dlc_fusion_test_{}_{}.dlcplan", getpid(),
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name()))
                               .string();
  plan::write_plan_file(codegen::lower_to_plan(*reparsed), path);
  const std::vector<Tensor> loaded = run_plan(plan::read_plan_file(path), inputs, 1);
  std::filesystem::remove(path);
  for (size_t i = 0; i < loaded.size(); ++i)
    EXPECT_EQ(loaded[i], want[i]) << "output " << i << " after the plan file";
}

ir::Value* op(ir::Graph& g, OpKind kind, std::vector<ir::Value*> in, Attrs attrs = {}) {
  return g.add_node(kind, std::move(in), std::move(attrs))->outputs[0];
}

ir::Value* scalar(ir::Graph& g, DType t, double v) {
  return g.add_constant(g.unique_value_name("c"), Tensor::from_double(t, {v}, {}));
}

TEST(Fusion, BiasGeluChain) {
  check_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {8, 33}});
        ir::Value* b = g.add_input("b", {DType::F32, {33}});
        ir::Value* a = op(g, OpKind::Add, {x, b});
        ir::Value* e = op(g, OpKind::Erf, {op(g, OpKind::Div, {a, scalar(g, DType::F32, std::sqrt(2.0))})});
        ir::Value* y = op(g, OpKind::Mul,
                          {op(g, OpKind::Mul, {a, op(g, OpKind::Add, {e, scalar(g, DType::F32, 1)})}),
                           scalar(g, DType::F32, 0.5)});
        g.add_output(y);
      },
      1);
}

TEST(Fusion, EveryOpWithBroadcasting) {
  check_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {4, 1, 5}});
        ir::Value* y = g.add_input("y", {DType::F32, {3, 1}});
        ir::Value* z = g.add_input("z", {DType::F32, {5}});
        ir::Value* c = g.add_input("c", {DType::Bool, {3, 5}});
        ir::Value* a = op(g, OpKind::Add, {x, y});  // [4,3,5]
        ir::Value* s = op(g, OpKind::Sub, {a, z});
        ir::Value* m = op(g, OpKind::Mul, {s, scalar(g, DType::F32, 0.75)});
        ir::Value* d =
            op(g, OpKind::Div, {m, op(g, OpKind::Add, {op(g, OpKind::Abs, {a}), scalar(g, DType::F32, 1)})});
        ir::Value* l = op(
            g, OpKind::Log,
            {op(g, OpKind::Add, {op(g, OpKind::Exp, {op(g, OpKind::Neg, {d})}), scalar(g, DType::F32, 1)})});
        ir::Value* p =
            op(g, OpKind::Pow, {op(g, OpKind::Sqrt, {op(g, OpKind::Abs, {l})}), scalar(g, DType::F32, 1.5)});
        ir::Value* t = op(g, OpKind::Tanh, {op(g, OpKind::Sigmoid, {op(g, OpKind::Sub, {p, s})})});
        ir::Value* mx = op(g, OpKind::Max, {t, s});
        ir::Value* mn = op(g, OpKind::Min, {mx, z});
        ir::Value* w = op(g, OpKind::Where, {c, op(g, OpKind::Relu, {mn}), s});
        ir::Value* cl = op(g, OpKind::Clip, {w, scalar(g, DType::F32, -0.25), scalar(g, DType::F32, 0.75)});
        g.add_output(cl);
        g.add_output(s);  // an intermediate that is also an output
      },
      1);
}

// The math ops (trigonometric, hyperbolic, rounding, Sign, Softplus, Softsign) in one chain, each
// on an operand in its domain, in f32 and in f16 storage: the program gives the unfused kernels'
// bits.
TEST(Fusion, MathOpsMatchTheirKernels) {
  for (DType t : {DType::F32, DType::F16}) {
    check_fusion(
        [t](ir::Graph& g) {
          ir::Value* v = g.add_input("x", {t, {6, 7}});
          for (OpKind k :
               {OpKind::Sin, OpKind::Cos, OpKind::Tan, OpKind::Asin, OpKind::Acos, OpKind::Atan, OpKind::Sinh,
                OpKind::Cosh, OpKind::Asinh, OpKind::Atanh, OpKind::Softplus, OpKind::Softsign, OpKind::Sign})
            v = op(g, k,
                   {op(g, OpKind::Mul, {op(g, OpKind::Tanh, {v}), scalar(g, t, 0.5)})});  // |operand| < 0.5
          v = op(g, OpKind::Acosh, {op(g, OpKind::Add, {op(g, OpKind::Abs, {v}), scalar(g, t, 1)})});
          for (OpKind k : {OpKind::Floor, OpKind::Ceil, OpKind::Round})
            v = op(g, k, {op(g, OpKind::Mul, {v, scalar(g, t, 2.7)})});
          g.add_output(v);
        },
        1);
  }
}

TEST(Fusion, BackwardOpsAndOptionalClipBounds) {
  check_fusion(
      [](ir::Graph& g) {
        ir::Value* dy = g.add_input("dy", {DType::F32, {16, 40}});
        ir::Value* y = g.add_input("y", {DType::F32, {16, 40}});
        ir::Value* dx = op(g, OpKind::ReluGrad, {dy, y});
        ir::Node* clip = g.add_node(OpKind::Clip, {dx, nullptr, scalar(g, DType::F32, 0.5)});
        ir::Value* sq = op(g, OpKind::Mul, {clip->outputs[0], clip->outputs[0]});
        ir::Value* lo = op(g, OpKind::Clip, {sq, scalar(g, DType::F32, 0.1)});
        g.add_output(lo);
        g.add_output(op(g, OpKind::ReduceSum, {dx}, [] {
          Attrs a;
          a.set("axes", std::vector<int64_t>{0});
          a.set("keepdims", int64_t(0));
          return a;
        }()));
      },
      1);
}

TEST(Fusion, HalfStorageRoundsLikeTheUnfusedKernels) {
  for (DType t : {DType::F16, DType::BF16}) {
    check_fusion(
        [t](ir::Graph& g) {
          ir::Value* x = g.add_input("x", {t, {6, 7}});
          ir::Value* b = g.add_input("b", {t, {7}});
          ir::Value* h = op(g, OpKind::Relu, {op(g, OpKind::Add, {x, b})});
          h = op(g, OpKind::Mul, {h, op(g, OpKind::Sigmoid, {x})});
          Attrs to_f32;
          to_f32.set("to", std::string("f32"));
          ir::Value* f = op(g, OpKind::Cast, {h}, to_f32);
          g.add_output(op(g, OpKind::Add, {f, scalar(g, DType::F32, 0.1)}));
          g.add_output(h);
        },
        1);
  }
}

// Reciprocal joins a group; a comparison (a bool result) ends one, and its Where starts the next.
TEST(Fusion, ReciprocalFusesComparisonsStayOut) {
  check_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {4, 5}});
        ir::Value* r = op(g, OpKind::Reciprocal,
                          {op(g, OpKind::Add, {op(g, OpKind::Abs, {x}), scalar(g, DType::F32, 0.5)})});
        ir::Value* ge = op(g, OpKind::GreaterOrEqual, {r, scalar(g, DType::F32, 0.75)});
        g.add_output(op(g, OpKind::Mul,
                        {op(g, OpKind::Where, {ge, r, op(g, OpKind::Neg, {x})}), scalar(g, DType::F32, 3)}));
      },
      2);
}

// Comparisons in a program (the CUDA binding's one-op programs; fusion leaves them out) give
// what the IR ops give, NaN comparing false, stored as bool.
TEST(Fusion, KernelComparisonsMatchTheIrOps) {
  std::vector<float> x = {1, 2, NAN, 3, -0.f}, y = {1, 3, NAN, 2, 0};
  const char* ops[] = {"Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"};
  const std::vector<std::vector<bool>> want = {
      {1, 0, 0, 0, 1}, {0, 0, 0, 1, 0}, {1, 0, 0, 1, 1}, {0, 1, 0, 0, 0}, {1, 1, 0, 0, 1}};
  for (size_t k = 0; k < 5; ++k) {
    std::vector<uint8_t> got(5, 7);
    Attrs attrs;
    attrs.set("program", fmt::format("%0 = input 0; %1 = input 1; %2 = {} %0, %1; output %2 bool", ops[k]));
    cpu::KernelContext ctx =
        cpu::test::kernel_context(attrs, {cpu::test::view(x, {5}), cpu::test::view(y, {5})},
                                  {cpu::test::view(DType::Bool, {5}, got.data())}, "FusedElementwise");
    cpu::find_kernel("FusedElementwise")(ctx);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(got[i], uint8_t(want[k][i])) << ops[k] << " element " << i;
  }
}

// The logical ops in a program (the CUDA binding's one-op programs; fusion takes float ops only)
// give the IR ops' results on bool operands.
TEST(Fusion, KernelLogicalOpsMatchTheIrOps) {
  std::vector<uint8_t> x = {0, 1, 0, 1}, y = {0, 0, 1, 1};
  const std::vector<std::pair<const char*, std::vector<uint8_t>>> cases = {
      {"And", {0, 0, 0, 1}}, {"Or", {0, 1, 1, 1}}, {"Xor", {0, 1, 1, 0}}, {"Not", {1, 0, 1, 0}}};
  for (const auto& [op, want] : cases) {
    const bool unary = std::string(op) == "Not";
    std::vector<uint8_t> got(4, 7), kernel(4, 7);
    std::vector<cpu::TensorView> in = {cpu::test::view(DType::Bool, {4}, x.data())};
    if (!unary) in.push_back(cpu::test::view(DType::Bool, {4}, y.data()));
    Attrs attrs;
    attrs.set("program", unary
                             ? fmt::format("%0 = input 0; %1 = {} %0; output %1 bool", op)
                             : fmt::format("%0 = input 0; %1 = input 1; %2 = {} %0, %1; output %2 bool", op));
    cpu::KernelContext ctx = cpu::test::kernel_context(
        attrs, in, {cpu::test::view(DType::Bool, {4}, got.data())}, "FusedElementwise");
    cpu::find_kernel("FusedElementwise")(ctx);
    cpu::KernelContext reference =
        cpu::test::kernel_context({}, in, {cpu::test::view(DType::Bool, {4}, kernel.data())}, op);
    cpu::find_kernel(op)(reference);
    EXPECT_EQ(got, want) << op;
    EXPECT_EQ(kernel, want) << op;
  }
}

TEST(Fusion, LargeTensorsUseBlocksAndThreads) {
  check_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {3, 70001}});
        ir::Value* b = g.add_input("b", {DType::F32, {70001}});
        ir::Value* r = g.add_input("r", {DType::F32, {3, 1}});
        g.add_output(op(g, OpKind::Tanh, {op(g, OpKind::Mul, {op(g, OpKind::Add, {x, b}), r})}));
      },
      1);
}

TEST(Fusion, MustNotFire) {
  check_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {2, 3}});
        ir::Value* big = g.add_input("big", {DType::F32, {4, 2, 3}});
        ir::Value* i = g.add_input("i", {DType::I64, {2, 3}});
        // Another shape: Neg [2,3] feeds Mul [4,2,3].
        g.add_output(op(g, OpKind::Mul, {op(g, OpKind::Neg, {x}), big}));
        // A random op in the chain.
        ir::Value* a = op(g, OpKind::Relu, {x});
        ir::Node* drop = g.add_node(OpKind::Dropout, {a}, [] {
          Attrs at;
          at.set("ratio", 0.5);
          at.set("seed", int64_t(3));
          return at;
        }());
        g.add_output(op(g, OpKind::Sigmoid, {drop->outputs[0]}));
        // The outside user (Transpose) of the first op comes before the second.
        ir::Value* s = op(g, OpKind::Exp, {x});
        Attrs perm;
        perm.set("perm", std::vector<int64_t>{0, 1});
        g.add_output(op(g, OpKind::Add, {s, op(g, OpKind::Transpose, {s}, perm)}));
        // Integers.
        g.add_output(op(g, OpKind::Neg, {op(g, OpKind::Abs, {i})}));
      },
      0);
}

// A forward chain on a half operand (bf16 x plus an f32 bias, GELU-like) whose intermediates a
// later kernel reads after a MatMul of its result: that kernel recomputes them from x and the bias
// (2 bytes an element and one row) instead of loading them (4 bytes an element each), and the
// first kernel stores only what the MatMul reads.
TEST(Fusion, LaterKernelRecomputesIntermediatesFromSmallerOperands) {
  int64_t recomputed = -1;
  size_t first_results = 0;
  const Build build = [](ir::Graph& g) {
    ir::Value* x = g.add_input("x", {DType::BF16, {6, 8}});
    ir::Value* b = g.add_input("b", {DType::F32, {8}});
    ir::Value* w = g.add_input("w", {DType::F32, {8, 8}});
    ir::Value* a = op(g, OpKind::Add,
                      {op(g, OpKind::Cast, {x},
                          [] {
                            Attrs at;
                            at.set("to", std::string("f32"));
                            return at;
                          }()),
                       b});
    ir::Value* e = op(g, OpKind::Erf, {a});
    ir::Value* m = op(g, OpKind::MatMul, {op(g, OpKind::Mul, {a, e}), w});
    g.add_output(op(g, OpKind::Mul, {op(g, OpKind::Mul, {m, e}), a}));
  };
  check_fusion(build, 2);
  ir::Graph g;
  build(g);
  passes::Fusion fusion;
  fusion.run(g);
  recomputed = fusion.stats().at("values_recomputed");
  for (const ir::Node* n : g.nodes())
    if (n->op == OpKind::FusedElementwise && first_results == 0) first_results = n->outputs.size();
  EXPECT_EQ(recomputed, 2) << ir::print_graph(g);
  EXPECT_EQ(first_results, 1u) << "the first kernel stores only the MatMul's operand\n" << ir::print_graph(g);
  // Both recomputed values need x + b: the later kernel computes it once.
  for (const ir::Node* n : g.nodes())
    if (n->op == OpKind::FusedElementwise) {
      const ExprProgram p = passes::program_of(*n);
      EXPECT_EQ(p.deduplicated().instrs.size(), p.instrs.size()) << p.str();
    }
}

// Greedy grouping puts the Mul with the group of its first operand; the group of its second
// (Exp(Neg(x)), read by that Mul alone) is then merged into it: one kernel.
TEST(Fusion, GroupReadOnlyByAnotherIsMergedIntoIt) {
  check_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {4, 5}});
        ir::Value* y = g.add_input("y", {DType::F32, {4, 5}});
        ir::Value* t = op(g, OpKind::Neg, {op(g, OpKind::Sigmoid, {y})});
        ir::Value* e = op(g, OpKind::Exp, {op(g, OpKind::Neg, {x})});
        g.add_output(op(g, OpKind::Mul, {t, e}));
      },
      2, 1);
}

// A rewrite that rebuilds a fused node (rematerialization, cast outputs) keeps its name, however
// often: profiles show it.
TEST(Fusion, RebuiltNodeKeepsItsName) {
  ir::Graph g;
  ir::Value* x = g.add_input("x", {DType::F32, {4, 5}});
  g.add_output(op(g, OpKind::Neg, {op(g, OpKind::Exp, {x})}));
  passes::Fusion().run(g);
  ASSERT_EQ(g.num_nodes(), 1u) << ir::print_graph(g);
  ir::Node* n = g.nodes()[0];
  const std::string name = n->name;
  for (int i = 0; i < 3; ++i)
    n = passes::replace_fused_node(g, n, {x}, passes::program_of(*n),
                                   std::vector<ir::Value*>(n->outputs.begin(), n->outputs.end()));
  ir::verify(g);
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(n->name, name);
}

// deduplicated() keeps one copy of each instruction and remaps operands and outputs; constants
// differing only in sign (0 and -0) and casts to different types stay apart.
TEST(Fusion, ProgramDeduplicationKeepsOneCopyOfEachInstruction) {
  ExprProgram p({4});
  const int x = p.input("x", DType::F32, {4}), x2 = p.op(ExprOp::Input, {});
  p.instrs[size_t(x2)].input = 0;  // a second load of input 0
  const int c = p.constant(2.0), c2 = p.constant(2.0), zero = p.constant(0.0), minus_zero = p.constant(-0.0);
  const int d1 = p.op(ExprOp::Div, {x, c}), d2 = p.op(ExprOp::Div, {x2, c2});
  const int e1 = p.op(ExprOp::Erf, {d1}), e2 = p.op(ExprOp::Erf, {d2});
  const int h = p.cast(e1, DType::F16), b = p.cast(e2, DType::BF16);
  p.output("sum", p.op(ExprOp::Add, {p.op(ExprOp::Add, {e1, e2}), p.op(ExprOp::Add, {zero, minus_zero})}),
           DType::F32);
  p.output("h", h, DType::F16);
  p.output("b", b, DType::BF16);
  p.validate();
  const ExprProgram q = p.deduplicated();
  q.validate();
  EXPECT_EQ(q.body(),
            "%0 = input 0; %1 = constant 2; %2 = constant 0; %3 = constant -0; %4 = Div %0, %1; %5 = Erf %4; "
            "%6 = Cast %5 to f16; %7 = Cast %5 to bf16; %8 = Add %5, %5; %9 = Add %2, %3; %10 = Add %8, %9; "
            "output %10 f32; output %6 f16; output %7 bf16");
  EXPECT_EQ(q.inputs.size(), 1u);
  EXPECT_EQ(q.deduplicated().body(), q.body());
}

TEST(Fusion, ProgramAttributeFormRoundTripsAndRejectsBadText) {
  ExprProgram p({4});
  p.output("y", p.op(ExprOp::Relu, {p.input("x", DType::F32, {4})}), DType::F32);
  EXPECT_EQ(p.body(), "%0 = input 0; %1 = Relu %0; output %1 f32");
  const ExprProgram q = parse_expr_program(p.body(), p.inputs, {"y"});
  EXPECT_EQ(q.str(), p.str());
  for (const char* bad : {"%0 = input 0; output %1 f32", "%0 = input 3; output %0 f32",
                          "%0 = input 0; %1 = Conv %0; output %1 f32", "%1 = input 0; output %1 f32",
                          "%0 = input 0; %1 = Cast %0 to i64; output %1 f32", "%0 = input 0",
                          "%0 = input 0; output %0 f32; output %0 f32", "%0 = constant x; output %0 f32"})
    EXPECT_THROW(parse_expr_program(bad, p.inputs, {"y"}), Error) << bad;
  EXPECT_EQ(
      parse_expr_program("%0 = constant -inf; %1 = Max %0, %0; output %1 f32", {}, {"y"}).instrs[0].value,
      -INFINITY);
}

// A plan is input: a program that does not parse, or does not match the step's buffers, is an
// error naming the step.
TEST(Fusion, KernelRejectsAProgramThatDoesNotFitItsStep) {
  std::vector<float> x(4), y(4);
  const auto run = [&](const std::string& program, Shape out_dims) {
    Attrs attrs;
    attrs.set("program", program);
    cpu::KernelContext ctx = cpu::test::kernel_context(
        attrs, {cpu::test::view(x, {4})}, {cpu::test::view(y, std::move(out_dims))}, "FusedElementwise");
    cpu::find_kernel("FusedElementwise")(ctx);
  };
  run("%0 = input 0; %1 = Relu %0; output %1 f32", {4});
  for (float v : y) EXPECT_EQ(v, 0.f);
  EXPECT_THROW(run("%0 = input 1; output %0 f32", {4}), Error);
  EXPECT_THROW(run("%0 = input 0; %1 = Relu %0; output %1 f16", {4}), Error);
  EXPECT_THROW(run("%0 = input 0; %1 = Relu %0; output %1 f32", {2, 2}), Error);
  try {
    run("garbage", {4});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 'test' (FusedElementwise)"), std::string::npos) << e.what();
  }
}

// ---- reduction fusion (passes/reduce_fusion.h): FusedReduce against the unfused producer and
// reduction, bit for bit with the same thread count (1, 2 and 3 threads: the serial, the
// parallel and the split paths of the reduction kernel).

Attrs reduce_attrs(std::vector<int64_t> axes, int64_t keepdims) {
  Attrs a;
  a.set("axes", std::move(axes));
  a.set("keepdims", keepdims);
  return a;
}

// Fuses a copy of `build`'s graph; expects `reductions` FusedReduce nodes (and `elementwise`
// FusedElementwise ones) and the unfused outputs bit for bit, also after the textual IR.
void check_reduce_fusion(const Build& build, int64_t reductions, int64_t elementwise = 0) {
  ir::Graph plain, fused;
  build(plain);
  build(fused);
  passes::Fusion fusion;
  fusion.run(fused);
  ir::verify(fused);
  const std::string text = ir::print_graph(fused);
  EXPECT_EQ(fusion.stats().at("reductions_fused"), reductions) << text;
  EXPECT_EQ(count(fused, OpKind::FusedReduce), reductions) << text;
  EXPECT_EQ(count(fused, OpKind::FusedElementwise), elementwise) << text;
  const std::map<std::string, Tensor> inputs = inputs_for(plain);
  const plan::Plan plain_plan = codegen::lower_to_plan(plain);
  const plan::Plan fused_plan = codegen::lower_to_plan(*ir::parse_graph(text));
  for (int threads : {1, 2, 3}) {
    const std::vector<Tensor> want = run_plan(plain_plan, inputs, threads);
    const std::vector<Tensor> got = run_plan(fused_plan, inputs, threads);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(got[i], want[i]) << "output " << i << ", " << threads << " threads";
  }
}

TEST(ReduceFusion, BiasGradientOfAReluGradChain) {
  for (int64_t rows : {16, 4096}) {  // serial; parallel over column blocks
    check_reduce_fusion(
        [rows](ir::Graph& g) {
          ir::Value* dy = g.add_input("dy", {DType::F32, {rows, 96}});
          ir::Value* y = g.add_input("y", {DType::F32, {rows, 96}});
          ir::Value* s = op(g, OpKind::Mul, {op(g, OpKind::ReluGrad, {dy, y}), scalar(g, DType::F32, 0.25)});
          g.add_output(op(g, OpKind::ReduceSum, {s}, reduce_attrs({0}, 0)));
        },
        1);
  }
}

TEST(ReduceFusion, RowsColumnsMeanAndALoneProducer) {
  // Rows longer than a block, reduced by ReduceMean, keepdims.
  check_reduce_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {33, 700}});
        ir::Value* b = g.add_input("b", {DType::F32, {700}});
        ir::Value* h = op(g, OpKind::Add, {op(g, OpKind::Mul, {x, x}), b});
        g.add_output(op(g, OpKind::ReduceMean, {h}, reduce_attrs({1}, 1)));
      },
      1);
  // The middle axes of [4, 30, 10, 70], a broadcast operand; a lone op's result.
  check_reduce_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {4, 30, 10, 70}});
        ir::Value* b = g.add_input("b", {DType::F32, {30, 1, 1}});
        g.add_output(op(g, OpKind::ReduceSum, {op(g, OpKind::Sub, {x, b})}, reduce_attrs({1, 2}, 0)));
      },
      1);
  // Everything to one value, long enough for the split over threads; a 16-bit operand.
  check_reduce_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F16, {160, 129}});
        ir::Value* h = g.add_input("h", {DType::F32, {129}});
        Attrs to_f32;
        to_f32.set("to", std::string("f32"));
        ir::Value* t = op(g, OpKind::Tanh, {op(g, OpKind::Mul, {op(g, OpKind::Cast, {x}, to_f32), h})});
        g.add_output(op(g, OpKind::ReduceSum, {t}, reduce_attrs({}, 0)));
      },
      1);
}

// A result the reduction reads and something else uses too is stored by the fused node (a bias
// gradient's dZ also feeds the weight gradient); so are the producer's other results.
TEST(ReduceFusion, StoresResultsUsedElsewhere) {
  check_reduce_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F32, {64, 48}});
        ir::Value* w = g.add_input("w", {DType::F32, {48, 8}});
        ir::Value* r = op(g, OpKind::Relu, {op(g, OpKind::Neg, {x})});
        g.add_output(op(g, OpKind::ReduceSum, {r}, reduce_attrs({0}, 1)));
        g.add_output(op(g, OpKind::MatMul, {r, w}));
        g.add_output(r);
      },
      1);
  check_reduce_fusion(
      [](ir::Graph& g) {
        ir::Value* z = g.add_input("z", {DType::F32, {3, 4, 5}});
        ir::Value* a = op(g, OpKind::Sigmoid, {z});
        ir::Value* c = op(g, OpKind::Cast, {op(g, OpKind::Mul, {a, z})}, [] {
          Attrs t;
          t.set("to", std::string("f16"));
          return t;
        }());
        g.add_output(op(g, OpKind::ReduceSum, {a}, reduce_attrs({2}, 0)));
        g.add_output(c);
      },
      1);
}

// Softmax's gradient in mixed precision: dy arrives in 16 bits and is cast to f32 for both the
// reduction's product and the elementwise part. Each fused group casts dy itself, so the f32 copy
// is not stored (the FusedReduce has one result) and the shared Cast goes; the bits stay.
TEST(ReduceFusion, GroupsRecastAWideningCastInsteadOfStoringIt) {
  for (DType half : {DType::F16, DType::BF16}) {
    const Build build = [half](ir::Graph& g) {
      ir::Value* dy = g.add_input("dy", {half, {12, 40}});
      ir::Value* y = g.add_input("y", {DType::F32, {12, 40}});
      Attrs to_f32;
      to_f32.set("to", std::string("f32"));
      ir::Value* wide = op(g, OpKind::Cast, {dy}, to_f32);
      ir::Value* s = op(g, OpKind::ReduceSum, {op(g, OpKind::Mul, {wide, y})}, reduce_attrs({1}, 1));
      g.add_output(op(g, OpKind::Mul, {y, op(g, OpKind::Sub, {wide, s})}));
    };
    check_reduce_fusion(build, 1, 1);
    ir::Graph g;
    build(g);
    passes::Fusion fusion;
    fusion.run(g);
    EXPECT_EQ(fusion.stats().at("casts_recast"), 1);  // the Cast joined the reduction's group
    EXPECT_EQ(fusion.stats().at("casts_removed"), 0);
    EXPECT_EQ(count(g, OpKind::Cast), 0) << ir::print_graph(g);
    for (const ir::Node* n : g.nodes()) {
      if (n->op == OpKind::FusedReduce) {
        EXPECT_EQ(n->outputs.size(), 1u) << ir::print_graph(g);
      }
      if (n->op == OpKind::FusedElementwise) {
        EXPECT_EQ(n->inputs[0]->name, "dy") << ir::print_graph(g);
      }
    }
  }
  // Readers that broadcast it: the Cast is left alone in its group, each reader's group casts
  // for itself, and the Cast goes.
  const Build broadcast = [](ir::Graph& g) {
    ir::Value* x = g.add_input("x", {DType::BF16, {12, 40}});
    Attrs to_f32;
    to_f32.set("to", std::string("f32"));
    ir::Value* wide = op(g, OpKind::Cast, {x}, to_f32);
    g.add_output(
        op(g, OpKind::Exp, {op(g, OpKind::Add, {wide, g.add_input("a", {DType::F32, {2, 12, 40}})})}));
    g.add_output(
        op(g, OpKind::Neg, {op(g, OpKind::Sub, {g.add_input("b", {DType::F32, {3, 12, 40}}), wide})}));
  };
  check_fusion(broadcast, 2);
  ir::Graph g;
  broadcast(g);
  passes::Fusion fusion;
  fusion.run(g);
  EXPECT_EQ(fusion.stats().at("casts_recast"), 2);
  EXPECT_EQ(fusion.stats().at("casts_removed"), 1);
  EXPECT_EQ(count(g, OpKind::Cast), 0) << ir::print_graph(g);
  // Where the f32 result is also a graph output, it is still stored, by the first group.
  check_reduce_fusion(
      [](ir::Graph& g) {
        ir::Value* dy = g.add_input("dy", {DType::BF16, {12, 40}});
        Attrs to_f32;
        to_f32.set("to", std::string("f32"));
        ir::Value* wide = op(g, OpKind::Cast, {dy}, to_f32);
        g.add_output(op(g, OpKind::ReduceSum, {op(g, OpKind::Exp, {wide})}, reduce_attrs({1}, 1)));
        g.add_output(op(g, OpKind::Neg, {op(g, OpKind::Abs, {wide})}));
        g.add_output(wide);
      },
      1, 1);
}

// Mixed precision's bias gradient: dZ (from a half gradient) is summed for the bias and cast to
// half for the weight gradient's MatMul. The Cast could not join dZ's group (the reduction read
// dZ first); it becomes the FusedReduce's second output, and dZ is no longer stored in f32.
TEST(ReduceFusion, HalfCastOfAStoredResultBecomesAnOutput) {
  const Build build = [](ir::Graph& g) {
    ir::Value* dy = g.add_input("dy", {DType::BF16, {6, 8}});
    ir::Value* s = g.add_input("s", {DType::F32, {8}});
    ir::Value* w = g.add_input("w", {DType::BF16, {8, 3}});
    const auto cast_to = [](const char* t) {
      Attrs a;
      a.set("to", std::string(t));
      return a;
    };
    ir::Value* dz = op(g, OpKind::Mul, {op(g, OpKind::Cast, {dy}, cast_to("f32")), s});
    Attrs axes;
    axes.set("axes", std::vector<int64_t>{0});
    axes.set("keepdims", int64_t(0));
    g.add_output(op(g, OpKind::ReduceSum, {dz}, axes));
    g.add_output(op(g, OpKind::MatMul, {op(g, OpKind::Cast, {dz}, cast_to("bf16")), w}));
  };
  check_fusion(build, 1);
  ir::Graph g;
  build(g);
  passes::Fusion fusion;
  fusion.run(g);
  EXPECT_EQ(fusion.stats().at("cast_outputs"), 1);
  EXPECT_EQ(count(g, OpKind::Cast), 0) << ir::print_graph(g);
  for (const ir::Node* n : g.nodes())
    if (n->op == OpKind::FusedReduce) {
      ASSERT_EQ(n->outputs.size(), 2u) << ir::print_graph(g);
      EXPECT_EQ(n->outputs[1]->type.dtype, DType::BF16) << "dZ is stored in half only";
    }
}

TEST(ReduceFusion, LeavesAloneWhatItMustNot) {
  // A 16-bit reduction, ReduceMax, axes that are not adjacent (the lone Abs stays as it is).
  check_reduce_fusion(
      [](ir::Graph& g) {
        ir::Value* x = g.add_input("x", {DType::F16, {8, 5}});
        g.add_output(
            op(g, OpKind::ReduceSum, {op(g, OpKind::Relu, {op(g, OpKind::Neg, {x})})}, reduce_attrs({0}, 0)));
        ir::Value* z = g.add_input("z", {DType::F32, {3, 4, 5}});
        g.add_output(
            op(g, OpKind::ReduceMax, {op(g, OpKind::Exp, {op(g, OpKind::Neg, {z})})}, reduce_attrs({0}, 0)));
        g.add_output(op(g, OpKind::ReduceSum, {op(g, OpKind::Abs, {z})}, reduce_attrs({0, 2}, 0)));
      },
      0, 2);
}

// FusedReduce's kernel checks its step: one f32 result, adjacent axes, the output's size.
TEST(ReduceFusion, KernelRejectsAStepThatDoesNotFit) {
  std::vector<float> x(12), y(4);
  const auto run = [&](const std::string& reduce, std::vector<int64_t> axes, Shape out_dims) {
    Attrs attrs;
    attrs.set("program", std::string("%0 = input 0; %1 = Relu %0; output %1 f32"));
    attrs.set("reduce", reduce);
    attrs.set("axes", std::move(axes));
    attrs.set("keepdims", int64_t(0));
    cpu::KernelContext ctx = cpu::test::kernel_context(
        attrs, {cpu::test::view(x, {3, 4})}, {cpu::test::view(y, std::move(out_dims))}, "FusedReduce");
    cpu::find_kernel("FusedReduce")(ctx);
  };
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) - 5.f;
  run("ReduceSum", {0}, {4});
  EXPECT_EQ(y, (std::vector<float>{3, 4, 6, 8}));  // Relu of -5 … 6, columns summed
  EXPECT_THROW(run("ReduceMax", {0}, {4}), Error);
  EXPECT_THROW(run("ReduceSum", {1}, {4}), Error);
  EXPECT_THROW(run("ReduceSum", {0, 0}, {4}), Error);
}

}  // namespace
}  // namespace dlc
