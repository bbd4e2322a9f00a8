// Mixed precision (passes/mixed_precision.h): where the pass puts its casts (MatMul in half, a
// softmax in half only between half ops, a batch norm of a half convolution in half, normalization left in
// f32, parameters still f32), that fp32 changes nothing, and that bf16 and fp16 training of the parity models
// (tests/parity/data) tracks fp32: the loss of each of 30 steps within a few percent (printed side by side);
// and that an fp16 step skipped for an overflow (in the gradients or the loss) changes no parameter and is no
// Adam step.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <string>

#include "codegen/lower.h"
#include "dlc/error.h"
#include "dlc/npy.h"
#include "dlc/session.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/fusion.h"
#include "passes/loss_scaling.h"
#include "passes/mixed_precision.h"
#include "passes/optimizer.h"
#include "tests/unit/source_dir.h"
#include "tests/unit/training_test_util.h"
#include "tools/driver/train_compile.h"

namespace dlc {
namespace {

// x [4, 5] -> MatMul w [5, 6] -> + b -> LayerNormalization -> Softmax: the output "probs".
std::unique_ptr<ir::Graph> matmul_norm_softmax() {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = g->add_input("x", TensorType{DType::F32, {4, 5}});
  ir::Value* w = g->add_parameter("w", test::random_normal({5, 6}, 1));
  ir::Value* b = g->add_parameter("b", test::random_normal({6}, 2));
  ir::Value* scale = g->add_parameter("scale", test::random_normal({6}, 3));
  ir::Value* h = g->add_node(ir::OpKind::MatMul, {x, w}, {}, {"h"})->outputs[0];
  h = g->add_node(ir::OpKind::Add, {h, b})->outputs[0];
  h = g->add_node(ir::OpKind::LayerNormalization, {h, scale}, {}, {"normed"})->outputs[0];
  g->add_output(g->add_node(ir::OpKind::Softmax, {h}, {}, {"probs"})->outputs[0]);
  return g;
}

const ir::Node* only_node(const ir::Graph& g, ir::OpKind op) {
  const ir::Node* found = nullptr;
  for (const ir::Node* n : g.nodes())
    if (n->op == op) {
      EXPECT_EQ(found, nullptr) << "more than one " << ir::op_info(op).name;
      found = n;
    }
  EXPECT_NE(found, nullptr);
  return found;
}

TEST(MixedPrecision, MatMulRunsInHalfBetweenCasts) {
  for (DType half : {DType::BF16, DType::F16}) {
    auto g = matmul_norm_softmax();
    passes::MixedPrecision pass(half);
    EXPECT_TRUE(pass.run(*g));
    ir::verify(*g);
    const ir::Node* mm = only_node(*g, ir::OpKind::MatMul);
    for (const ir::Value* in : mm->inputs) {
      EXPECT_EQ(in->type.dtype, half);
      ASSERT_NE(in->producer, nullptr);
      EXPECT_EQ(in->producer->op, ir::OpKind::Cast);
      EXPECT_EQ(in->producer->inputs[0]->type.dtype, DType::F32);
    }
    EXPECT_EQ(mm->outputs[0]->type.dtype, half);
    // The result is cast back under the old name; what reads it stays f32.
    const ir::Value* h = g->find_value("h");
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(h->type.dtype, DType::F32);
    EXPECT_EQ(h->producer->op, ir::OpKind::Cast);
    for (ir::OpKind op : {ir::OpKind::Add, ir::OpKind::LayerNormalization, ir::OpKind::Softmax})
      for (const ir::Value* in : only_node(*g, op)->inputs)
        if (in) {
          EXPECT_EQ(in->type.dtype, DType::F32) << ir::op_info(op).name;
        }
    // Master weights: the parameter is still the f32 initializer.
    EXPECT_EQ(g->find_value("w")->role, ir::Role::Parameter);
    EXPECT_EQ(g->find_value("w")->type.dtype, DType::F32);
    EXPECT_EQ(g->outputs()[0]->name, "probs");
    EXPECT_EQ(g->outputs()[0]->type.dtype, DType::F32);
    EXPECT_EQ(pass.stats().at("ops_in_half"), 1);
    EXPECT_EQ(pass.stats().at("casts_to_half"), 2);
  }
}

TEST(MixedPrecision, Fp32LeavesTheGraphUnchanged) {
  auto g = matmul_norm_softmax();
  const std::string before = ir::print_graph(*g);
  EXPECT_FALSE(passes::MixedPrecision(DType::F32).run(*g));
  EXPECT_EQ(ir::print_graph(*g), before);
}

TEST(MixedPrecision, OneCastPerValueAndHalfOpsLeftAlone) {
  // Two MatMuls read w: one cast of w serves both. A MatMul already in f16 is not touched.
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 3}});
  ir::Value* y = g.add_input("y", TensorType{DType::F16, {2, 3}});
  ir::Value* w = g.add_parameter("w", test::random_normal({3, 3}, 4));
  ir::Value* a = g.add_node(ir::OpKind::MatMul, {x, w})->outputs[0];
  ir::Value* b = g.add_node(ir::OpKind::MatMul, {a, w})->outputs[0];
  g.add_output(b);
  Attrs t;
  t.set("transpose_b", int64_t(1));
  g.add_output(g.add_node(ir::OpKind::MatMul, {y, y}, t)->outputs[0]);
  passes::MixedPrecision pass(DType::BF16);
  EXPECT_TRUE(pass.run(g));
  ir::verify(g);
  EXPECT_EQ(pass.stats().at("ops_in_half"), 2);
  EXPECT_EQ(pass.stats().at("casts_to_half"), 2);        // x and w
  EXPECT_EQ(pass.stats().at("round_trips_skipped"), 1);  // the second MatMul reads a's half result
  EXPECT_EQ(g.outputs()[1]->type.dtype, DType::F16);
}

TEST(MixedPrecision, TransposedOperandsAreCastBeforeTheirTranspose) {
  // MatMul(x, Transpose(w)), as ONNX exports a Linear: the half operand is Transpose(Cast(w)),
  // which epilogue fusion then folds into the MatMul as transpose_b.
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 3}});
  ir::Value* w = g.add_parameter("w", test::random_normal({4, 3}, 5));
  Attrs perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  ir::Value* wt = g.add_node(ir::OpKind::Transpose, {w}, perm, {"wt"})->outputs[0];
  g.add_output(g.add_node(ir::OpKind::MatMul, {x, wt})->outputs[0]);
  passes::MixedPrecision pass(DType::BF16);
  EXPECT_TRUE(pass.run(g));
  ir::verify(g);
  const ir::Node* mm = only_node(g, ir::OpKind::MatMul);
  const ir::Node* t = mm->inputs[1]->producer;
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->op, ir::OpKind::Transpose);
  EXPECT_EQ(t->attrs.ints("perm", {}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(t->outputs[0]->type, (TensorType{DType::BF16, {3, 4}}));
  ASSERT_NE(t->inputs[0]->producer, nullptr);
  EXPECT_EQ(t->inputs[0]->producer->op, ir::OpKind::Cast);
  EXPECT_EQ(t->inputs[0]->producer->inputs[0], w);
  EXPECT_EQ(pass.stats().at("casts_to_half"), 2);  // x and w
  EXPECT_EQ(pass.stats().at("transposes_in_half"), 1);
  EXPECT_TRUE(g.users(wt).empty()) << "the f32 Transpose is left for dead-code elimination";
}

TEST(MixedPrecision, HalfResultsReachTheNextHalfMatMulWithoutF32) {
  // Attention's heads: a = MatMul(x, w) [4, 6] -> Reshape [4, 2, 3] -> Transpose [2, 4, 3] ->
  // MatMul(·, v). The second MatMul reads the first's half result reshaped and transposed in
  // half: no cast to f32 and back (the same bits), and a Transpose of half the bytes.
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {4, 5}});
  ir::Value* w = g.add_parameter("w", test::random_normal({5, 6}, 6));
  ir::Value* v = g.add_parameter("v", test::random_normal({3, 2}, 7));
  ir::Value* a = g.add_node(ir::OpKind::MatMul, {x, w}, {}, {"a"})->outputs[0];
  Attrs shape, perm;
  shape.set("shape", std::vector<int64_t>{4, 2, 3});
  perm.set("perm", std::vector<int64_t>{1, 0, 2});
  ir::Value* heads = g.add_node(ir::OpKind::Reshape, {a}, shape)->outputs[0];
  ir::Value* t = g.add_node(ir::OpKind::Transpose, {heads}, perm)->outputs[0];
  g.add_output(g.add_node(ir::OpKind::MatMul, {t, v}, {}, {"out"})->outputs[0]);
  passes::MixedPrecision pass(DType::BF16);
  EXPECT_TRUE(pass.run(g));
  ir::verify(g);
  const ir::Node* second = g.find_value("out")->producer->inputs[0]->producer;  // the half MatMul
  ASSERT_EQ(second->op, ir::OpKind::MatMul);
  const ir::Node* tr = second->inputs[0]->producer;
  ASSERT_EQ(tr->op, ir::OpKind::Transpose);
  EXPECT_EQ(tr->outputs[0]->type, (TensorType{DType::BF16, {2, 4, 3}}));
  const ir::Node* rs = tr->inputs[0]->producer;
  ASSERT_EQ(rs->op, ir::OpKind::Reshape);
  const ir::Node* first = rs->inputs[0]->producer;
  ASSERT_EQ(first->op, ir::OpKind::MatMul) << "the Reshape reads the first MatMul's half result";
  EXPECT_EQ(first->outputs[0]->type.dtype, DType::BF16);
  EXPECT_EQ(pass.stats().at("round_trips_skipped"), 1);
  EXPECT_EQ(pass.stats().at("reshapes_in_half"), 1);
  EXPECT_EQ(pass.stats().at("transposes_in_half"), 1);
  EXPECT_EQ(pass.stats().at("casts_to_half"), 3);  // x, w and v
}

TEST(MixedPrecision, SoftmaxReadOnlyByHalfOpsRunsInHalf) {
  // Attention's probabilities: MatMul -> Softmax -> MatMul. The Softmax reads the first MatMul's
  // half result and gives the second its half probabilities; a Softmax that is a graph output
  // (matmul_norm_softmax above) stays f32.
  ir::Graph g;
  ir::Value* q = g.add_input("q", TensorType{DType::F32, {4, 3}});
  ir::Value* k = g.add_parameter("k", test::random_normal({3, 4}, 8));
  ir::Value* v = g.add_parameter("v", test::random_normal({4, 2}, 9));
  ir::Value* scores = g.add_node(ir::OpKind::MatMul, {q, k})->outputs[0];
  ir::Value* p = g.add_node(ir::OpKind::Softmax, {scores}, {}, {"p"})->outputs[0];
  g.add_output(g.add_node(ir::OpKind::MatMul, {p, v}, {}, {"out"})->outputs[0]);
  passes::MixedPrecision pass(DType::F16);
  EXPECT_TRUE(pass.run(g));
  ir::verify(g);
  EXPECT_EQ(pass.stats().at("softmax_in_half"), 1);
  const ir::Node* softmax = only_node(g, ir::OpKind::Softmax);
  EXPECT_EQ(softmax->inputs[0]->type.dtype, DType::F16);
  EXPECT_EQ(softmax->inputs[0]->producer->op, ir::OpKind::MatMul);
  EXPECT_EQ(softmax->outputs[0]->type.dtype, DType::F16);
  const std::vector<ir::Node*> readers = g.users(softmax->outputs[0]);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0]->op, ir::OpKind::MatMul);
  EXPECT_EQ(g.find_value("p"), nullptr) << "the f32 Softmax is gone";

  auto g2 = matmul_norm_softmax();
  passes::MixedPrecision pass2(DType::F16);
  pass2.run(*g2);
  EXPECT_EQ(pass2.stats().at("softmax_in_half"), 0);
  EXPECT_EQ(pass2.stats().at("layer_norms_in_half"), 0) << "its result goes to the f32 Softmax";
}

// The outputs of `g` (its parameters as initializers) for `inputs`, on the CPU.
std::vector<Tensor> run_graph(const ir::Graph& g, const std::map<std::string, Tensor>& inputs) {
  std::unique_ptr<Session> s = Session::create(codegen::lower_to_plan(g), {1});
  for (const auto& [name, value] : inputs) s->set_input(name, value);
  s->run();
  std::vector<Tensor> out;
  for (const Session::Signature& o : s->outputs()) out.push_back(s->output(o.name));
  return out;
}

TEST(MixedPrecision, LayerNormReadOnlyByHalfOpsGivesAHalfResult) {
  // A transformer's LayerNormalization -> MatMul: the layer norm reads f32 x and gives the MatMul
  // its half result directly (y_dtype), no f32 result and Cast.
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {4, 6}});
  ir::Value* scale = g.add_parameter("scale", test::random_normal({6}, 3));
  ir::Value* bias = g.add_parameter("bias", test::random_normal({6}, 4));
  ir::Value* w = g.add_parameter("w", test::random_normal({6, 2}, 5));
  ir::Value* y = g.add_node(ir::OpKind::LayerNormalization, {x, scale, bias}, {}, {"y"})->outputs[0];
  g.add_output(g.add_node(ir::OpKind::MatMul, {y, w}, {}, {"out"})->outputs[0]);
  passes::MixedPrecision pass(DType::BF16);
  EXPECT_TRUE(pass.run(g));
  ir::verify(g);
  EXPECT_EQ(pass.stats().at("layer_norms_in_half"), 1);
  const ir::Node* ln = only_node(g, ir::OpKind::LayerNormalization);
  EXPECT_EQ(ln->inputs[0], x);
  EXPECT_EQ(ln->attrs.s("y_dtype", ""), "bf16");
  EXPECT_EQ(ln->outputs[0]->type, (TensorType{DType::BF16, {4, 6}}));
  const std::vector<ir::Node*> readers = g.users(ln->outputs[0]);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(readers[0]->op, ir::OpKind::MatMul);
  EXPECT_EQ(g.find_value("y"), nullptr) << "the f32 result is gone";
}

TEST(MixedPrecision, HalfLayerNormResultAndGradientAreTheCastBits) {
  // LayerNormalization {y_dtype = bf16} gives Cast(LayerNormalization) bit for bit, and
  // LayerNormGrad with a bf16 dy gives what it gives with that dy widened to f32 (CPU kernels).
  const Tensor x = test::random_normal({3, 8}, 30);
  const Tensor dy = [] {
    Tensor f = test::random_normal({3, 8}, 31);
    const std::vector<double> v = f.as_double();
    return Tensor::from_double(DType::BF16, v, {3, 8});
  }();
  Attrs to_bf16, half_y;
  to_bf16.set("to", std::string("bf16"));
  half_y.set("y_dtype", std::string("bf16"));
  const auto forward = [&](bool half_result) {
    ir::Graph g;
    ir::Value* in = g.add_input("x", TensorType{DType::F32, {3, 8}});
    ir::Value* scale = g.add_parameter("scale", test::random_normal({8}, 32));
    ir::Value* bias = g.add_parameter("bias", test::random_normal({8}, 33));
    ir::Value* y =
        g.add_node(ir::OpKind::LayerNormalization, {in, scale, bias}, half_result ? half_y : Attrs{})
            ->outputs[0];
    g.add_output(half_result ? y : g.add_node(ir::OpKind::Cast, {y}, to_bf16)->outputs[0]);
    return run_graph(g, {{"x", x}});
  };
  const std::vector<Tensor> cast = forward(false), half = forward(true);
  EXPECT_EQ(half.at(0).type.dtype, DType::BF16);
  EXPECT_EQ(half.at(0), cast.at(0));

  const auto backward = [&](bool half_dy) {
    ir::Graph g;
    ir::Value* in = g.add_input("x", TensorType{DType::F32, {3, 8}});
    ir::Value* d = g.add_input("dy", TensorType{DType::BF16, {3, 8}});
    ir::Value* scale = g.add_parameter("scale", test::random_normal({8}, 34));
    if (!half_dy) {
      Attrs to_f32;
      to_f32.set("to", std::string("f32"));
      d = g.add_node(ir::OpKind::Cast, {d}, to_f32)->outputs[0];
    }
    Attrs axis;
    axis.set("axis", int64_t(1));
    for (ir::Value* v :
         g.add_node(ir::OpKind::LayerNormGrad, {d, in, scale}, axis, {"dx", "dscale", "dbias"})->outputs)
      g.add_output(v);
    return run_graph(g, {{"x", x}, {"dy", dy}});
  };
  const std::vector<Tensor> wide = backward(false), narrow = backward(true);
  ASSERT_EQ(narrow.size(), 3u);
  for (size_t o = 0; o < 3; ++o) {
    EXPECT_EQ(narrow[o].type.dtype, DType::F32) << o;
    EXPECT_EQ(narrow[o], wide[o]) << "output " << o;
  }
}

TEST(MixedPrecision, UnknownPrecisionIsAnError) {
  EXPECT_EQ(passes::parse_precision("fp32"), DType::F32);
  EXPECT_EQ(passes::parse_precision("bf16"), DType::BF16);
  EXPECT_EQ(passes::parse_precision("fp16"), DType::F16);
  EXPECT_THROW(passes::parse_precision("fp8"), Error);
}

// An Adam training session of the parity model `model` for its one batch `data`.
std::unique_ptr<Session> parity_session(const std::string& model, const std::map<std::string, Tensor>& data,
                                        const std::string& precision, int64_t accumulate = 1) {
  driver::TrainCompileOptions options;
  options.compile.import.batch = data.at("label").type.shape.at(0);
  options.optimizer.kind = "adam";
  options.optimizer.accumulate = accumulate;
  options.precision = precision;
  const driver::Compiled c = driver::compile_training(test::parity_dir(model) + "/model.onnx", options);
  return Session::create(c.plan, {1});
}

// Runs micro-step `micro` of iteration `step` (from 1) on the batch `data`; returns the loss.
float run_parity_step(Session& session, const std::map<std::string, Tensor>& data, int step,
                      bool apply = true) {
  for (const Session::Signature& in : session.inputs()) {
    if (data.count(in.name)) {
      session.set_input(in.name, data.at(in.name));
    } else if (in.name == passes::kLearningRateInput) {
      session.set_input(in.name, Tensor::scalar_f32(1e-3f));
    } else if (in.name == passes::kStepInput) {
      session.set_input(in.name, Tensor::scalar_f32(float(step)));
    } else if (in.name == passes::kApplyInput) {
      Tensor t(TensorType{DType::Bool, {}});
      t.bytes[0] = apply;
      session.set_input(in.name, t);
    } else {
      ADD_FAILURE() << "unexpected input " << in.name;
    }
  }
  session.run();
  return *session.output(session.outputs().at(0).name).data<float>();
}

// The loss of each of `steps` Adam steps on the parity model's one batch; `loss_scale` gets the
// final loss scale (fp16) or stays as it is.
std::vector<float> train_losses(const std::string& model, const std::string& precision, int steps,
                                float* loss_scale = nullptr) {
  const std::map<std::string, Tensor> data = read_npz(test::parity_dir(model) + "/data.npz");
  std::unique_ptr<Session> session = parity_session(model, data, precision);
  std::vector<float> losses;
  for (int k = 0; k < steps; ++k) losses.push_back(run_parity_step(*session, data, k + 1));
  if (precision == "fp16") *loss_scale = *session->read_state(passes::kLossScale).data<float>();
  return losses;
}

TEST(MixedPrecision, BatchNormOfAHalfConvolutionRunsInHalf) {
  // The parity CNN's Conv -> BatchNormalization: the batch norm reads the convolution's half
  // result and keeps f32 parameters and running statistics (cuDNN's mixed batch norm); its
  // gradient has half dy, x and dx and f32 parameter gradients.
  for (const char* precision : {"bf16", "fp16"}) {
    driver::TrainCompileOptions options;
    options.compile.import.batch = 8;
    options.precision = precision;
    const driver::Compiled c = driver::compile_training(test::parity_dir("cnn") + "/model.onnx", options);
    const DType half = passes::parse_precision(precision);
    int64_t in_half = -1;
    for (const passes::PassRecord& r : c.passes)
      if (r.name == "mixed-precision") in_half = r.stats.at("batch_norms_in_half");
    EXPECT_GT(in_half, 0) << precision;
    int forward = 0, backward = 0;
    for (const ir::Node* n : c.graph->nodes()) {
      if (n->op == ir::OpKind::BatchNormalization) {
        ++forward;
        EXPECT_EQ(n->inputs[0]->type.dtype, half) << n->name;
        EXPECT_EQ(n->outputs[0]->type.dtype, half) << n->name;
        for (size_t i = 1; i < n->inputs.size(); ++i)
          EXPECT_EQ(n->inputs[i]->type.dtype, DType::F32) << n->name;
        for (size_t o = 1; o < n->outputs.size(); ++o)
          EXPECT_EQ(n->outputs[o]->type.dtype, DType::F32) << n->name;
      } else if (n->op == ir::OpKind::BatchNormGrad) {
        ++backward;
        EXPECT_EQ(n->inputs[0]->type.dtype, half) << n->name;
        EXPECT_EQ(n->outputs[0]->type.dtype, half) << n->name;
        EXPECT_EQ(n->outputs[1]->type.dtype, DType::F32) << n->name;
      }
    }
    EXPECT_EQ(forward, in_half) << precision;
    EXPECT_EQ(backward, in_half) << precision;
  }
}

TEST(MixedPrecision, ReluAndPoolBetweenHalfBatchNormAndConvolutionRunInHalf) {
  // Conv -> BatchNormalization -> Relu -> MaxPool -> Conv (ResNet's stem): the Relu reads the
  // batch norm's half result and the max pool the Relu's, which gives the second convolution its
  // half operand; epilogue fusion then folds the Relu into the batch norm.
  ir::Graph g;
  ir::Value* x = g.add_input("x", TensorType{DType::F32, {2, 3, 6, 6}});
  ir::Value* w1 = g.add_parameter("w1", test::random_normal({4, 3, 3, 3}, 10));
  ir::Value* w2 = g.add_parameter("w2", test::random_normal({2, 4, 3, 3}, 11));
  std::vector<ir::Value*> bn_inputs = {g.add_node(ir::OpKind::Conv, {x, w1})->outputs[0]};
  for (uint32_t i = 0; i < 4; ++i)
    bn_inputs.push_back(g.add_parameter(fmt::format("bn{}", i), test::random_normal({4}, 12 + i)));
  ir::Value* y = g.add_node(ir::OpKind::BatchNormalization, bn_inputs)->outputs[0];
  ir::Value* r = g.add_node(ir::OpKind::Relu, {y})->outputs[0];
  Attrs window;
  window.set("kernel_shape", std::vector<int64_t>{2, 2});
  ir::Value* pooled = g.add_node(ir::OpKind::MaxPool, {r}, window)->outputs[0];
  g.add_output(g.add_node(ir::OpKind::Conv, {pooled, w2}, {}, {"out"})->outputs[0]);
  passes::MixedPrecision pass(DType::BF16);
  EXPECT_TRUE(pass.run(g));
  ir::verify(g);
  EXPECT_EQ(pass.stats().at("batch_norms_in_half"), 1);
  EXPECT_EQ(pass.stats().at("relus_in_half"), 1);
  EXPECT_EQ(pass.stats().at("pools_in_half"), 1);
  g.remove_dead_nodes();  // the f32 Relu, left for dead-code elimination
  const ir::Node* relu = only_node(g, ir::OpKind::Relu);
  EXPECT_EQ(relu->inputs[0]->producer->op, ir::OpKind::BatchNormalization);
  EXPECT_EQ(relu->outputs[0]->type.dtype, DType::BF16);
  const ir::Node* pool = g.users(relu->outputs[0]).at(0);
  EXPECT_EQ(pool->op, ir::OpKind::MaxPool);
  EXPECT_EQ(pool->outputs[0]->type.dtype, DType::BF16);
  EXPECT_EQ(g.users(pool->outputs[0]).at(0)->op, ir::OpKind::Conv);
  passes::Fusion fusion;
  fusion.run(g);
  EXPECT_EQ(only_node(g, ir::OpKind::BatchNormalization)->attrs.s("activation", ""), "relu")
      << ir::print_graph(g);
}

// Two residual blocks (Conv -> BatchNormalization -> Add(·, shortcut) -> Relu, ResNet's), and an
// Add of a convolution to the f32 input x. The residual Adds read two half results (the batch
// norm's and the previous block's Relu) and run in half, as autocast's do; the Add with x keeps
// f32 (type promotion). The bf16 graph's outputs stay within bf16 rounding of the f32 graph's.
std::unique_ptr<ir::Graph> residual_blocks() {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = g->add_input("x", TensorType{DType::F32, {2, 3, 6, 6}});
  Attrs same;
  same.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  uint32_t seed = 20;
  const auto conv_bn = [&](ir::Value* in, int64_t in_channels) {
    ir::Value* w =
        g->add_parameter(fmt::format("w{}", seed), test::random_normal({4, in_channels, 3, 3}, seed, 0.3f));
    std::vector<ir::Value*> bn = {g->add_node(ir::OpKind::Conv, {in, w}, same)->outputs[0]};
    for (uint32_t i = 0; i < 4; ++i) {
      Tensor t = test::random_normal({4}, seed * 10 + i, 0.1f);
      if (i == 0 || i == 3)  // scale and variance near 1
        for (int64_t c = 0; c < 4; ++c) t.data<float>()[c] = 1.f + std::abs(t.data<float>()[c]);
      bn.push_back(g->add_parameter(fmt::format("bn{}_{}", seed, i), t));
    }
    ++seed;
    return g->add_node(ir::OpKind::BatchNormalization, bn)->outputs[0];
  };
  ir::Value* r = g->add_node(ir::OpKind::Relu, {conv_bn(x, 3)})->outputs[0];
  for (int block = 0; block < 2; ++block) {
    ir::Value* sum = g->add_node(ir::OpKind::Add, {conv_bn(r, 4), r})->outputs[0];
    r = g->add_node(ir::OpKind::Relu, {sum})->outputs[0];
  }
  ir::Value* w = g->add_parameter("w_out", test::random_normal({3, 4, 3, 3}, 99, 0.3f));
  g->add_output(g->add_node(ir::OpKind::Conv, {r, w}, same, {"out"})->outputs[0]);
  ir::Value* skip =
      g->add_node(ir::OpKind::Conv,
                  {x, g->add_parameter("w_skip", test::random_normal({3, 3, 3, 3}, 98, 0.3f))}, same)
          ->outputs[0];
  g->add_output(g->add_node(ir::OpKind::Add, {skip, x}, {}, {"skip"})->outputs[0]);
  return g;
}

TEST(MixedPrecision, ResidualAddOfTwoHalfResultsRunsInHalf) {
  std::unique_ptr<ir::Graph> g = residual_blocks();
  passes::MixedPrecision pass(DType::BF16);
  EXPECT_TRUE(pass.run(*g));
  ir::verify(*g);
  g->remove_dead_nodes();  // the f32 Relus, left for dead-code elimination
  EXPECT_EQ(pass.stats().at("adds_in_half"), 2);
  int half_adds = 0, f32_adds = 0;
  for (const ir::Node* n : g->nodes()) {
    if (n->op == ir::OpKind::Add) {
      const bool half = n->outputs[0]->type.dtype == DType::BF16;
      ++(half ? half_adds : f32_adds);
      for (const ir::Value* v : n->inputs) EXPECT_EQ(v->type.dtype, n->outputs[0]->type.dtype) << n->name;
    }
    if (n->op == ir::OpKind::Relu) {
      EXPECT_EQ(n->outputs[0]->type.dtype, DType::BF16) << n->name;
    }
  }
  EXPECT_EQ(half_adds, 2) << ir::print_graph(*g);
  EXPECT_EQ(f32_adds, 1) << "the Add with the f32 input x\n" << ir::print_graph(*g);

  const Tensor x = test::random_normal({2, 3, 6, 6}, 7);
  const auto outputs = [&](const ir::Graph& graph) {
    std::unique_ptr<Session> s = Session::create(codegen::lower_to_plan(graph), {1});
    s->set_input("x", x);
    s->run();
    return std::vector<Tensor>{s->output("out"), s->output("skip")};
  };
  const std::vector<Tensor> want = outputs(*residual_blocks()), got = outputs(*g);
  for (size_t o = 0; o < want.size(); ++o) {
    const std::vector<double> a = want[o].as_double(), b = got[o].as_double();
    double largest = 0, worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      largest = std::max(largest, std::abs(a[i]));
      worst = std::max(worst, std::abs(a[i] - b[i]));
    }
    EXPECT_GT(largest, 0.1) << "output " << o;
    EXPECT_LT(worst, 0.03 * largest) << "output " << o;
  }
}

class MixedPrecisionTraining : public testing::TestWithParam<std::string> {};

TEST_P(MixedPrecisionTraining, LossTracksFp32) {
  const std::string model = GetParam();
  constexpr int kSteps = 30;
  const std::vector<float> fp32 = train_losses(model, "fp32", kSteps);
  for (const char* precision : {"bf16", "fp16"}) {
    float loss_scale = 0;
    const std::vector<float> half = train_losses(model, precision, kSteps, &loss_scale);
    // fp16: no step overflowed at the default scale, and 30 steps are short of the growth interval.
    if (std::string(precision) == "fp16") {
      EXPECT_EQ(loss_scale, 65536.f);
    }
    double worst = 0;
    for (int k = 0; k < kSteps; ++k) {
      const double rel = std::abs(double(half[k]) - fp32[k]) / std::abs(double(fp32[k]));
      worst = std::max(worst, rel);
      EXPECT_LT(rel, 0.03) << model << " " << precision << " step " << k + 1 << ": " << half[k] << " vs fp32 "
                           << fp32[k];
    }
    std::cout << model << " " << precision << ": loss step 1 " << half[0] << " (fp32 " << fp32[0]
              << "), step " << kSteps << " " << half.back() << " (fp32 " << fp32.back()
              << "), largest relative difference " << worst << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(ParityModels, MixedPrecisionTraining,
                         testing::Values("mlp", "transformer", "cnn", "resnet"));

float read_scalar(const Session& s, const char* state) { return *s.read_state(state).data<float>(); }

// fp16 with Adam: a step skipped for an overflow is no optimizer step, as with PyTorch's
// GradScaler (whose scaler.step() then does not call optimizer.step(), so Adam's state['step']
// stays). One overflowing iteration (the loss scale forced to 1e30) and then a good one, fed
// step 2, leave every parameter and Adam moment with the bytes of one good step from the start:
// both used bias correction 1. With --accumulate 2 as well (two micro-steps per iteration).
class SkippedStep : public testing::TestWithParam<int64_t> {};

TEST_P(SkippedStep, IsNoAdamStep) {
  const int64_t micro = GetParam();
  const std::map<std::string, Tensor> data = read_npz(test::parity_dir("mlp") + "/data.npz");
  auto iteration = [&](Session& s, int step) {
    for (int64_t k = 0; k < micro; ++k) run_parity_step(s, data, step, k == micro - 1);
  };
  std::unique_ptr<Session> skipped = parity_session("mlp", data, "fp16", micro);
  std::unique_ptr<Session> straight = parity_session("mlp", data, "fp16", micro);
  const std::map<std::string, Tensor> initial = [&] {
    std::map<std::string, Tensor> m;
    for (const std::string& name : skipped->state_names()) m[name] = skipped->read_state(name);
    return m;
  }();
  const float scale = read_scalar(*skipped, passes::kLossScale);

  skipped->write_state(passes::kLossScale, Tensor::scalar_f32(1e30f));
  iteration(*skipped, 1);
  ASSERT_EQ(read_scalar(*skipped, passes::kLossScaleSkippedSteps), 1.f)
      << "the first iteration did not overflow";
  EXPECT_EQ(read_scalar(*skipped, passes::kLossScale), 5e29f);
  for (const auto& [name, before] : initial)
    if (name.rfind("loss_scale", 0) != 0) {
      EXPECT_EQ(skipped->read_state(name).bytes, before.bytes) << name << " changed in a skipped step";
    }
  skipped->write_state(passes::kLossScale, Tensor::scalar_f32(scale));
  iteration(*skipped, 2);
  iteration(*straight, 1);
  EXPECT_EQ(read_scalar(*skipped, passes::kLossScaleSkippedSteps), 1.f);
  EXPECT_EQ(read_scalar(*straight, passes::kLossScaleSkippedSteps), 0.f);
  int compared = 0;
  for (const std::string& name : straight->state_names()) {
    if (name == passes::kLossScaleSkippedSteps) continue;
    EXPECT_EQ(skipped->read_state(name).bytes, straight->read_state(name).bytes) << name;
    compared += name.find("exp_avg") != std::string::npos;
  }
  EXPECT_GT(compared, 0) << "no Adam moment among the state";
}

INSTANTIATE_TEST_SUITE_P(MicroSteps, SkippedStep, testing::Values(1, 2));

// The backward of a half MatMul whose bias Add runs in f32 between mixed precision's casts
// (MatMul.half -> Cast f32 -> Add b -> Cast half -> MatMul.half): the first MatMul's result
// gradient is the second MatMul's half input gradient itself, not that gradient widened to f32
// and narrowed back (the same bits, written again a step at the activation's size).
TEST(MixedPrecision, BackwardHasNoHalfGradientRoundTrip) {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = g->add_input("x", TensorType{DType::F32, {4, 5}});
  ir::Value* w = g->add_parameter("w", test::random_normal({5, 6}, 8));
  ir::Value* b = g->add_parameter("b", test::random_normal({6}, 9));
  ir::Value* w2 = g->add_parameter("w2", test::random_normal({6, 3}, 10));
  ir::Value* h = g->add_node(ir::OpKind::MatMul, {x, w})->outputs[0];
  h = g->add_node(ir::OpKind::Add, {h, b})->outputs[0];
  g->add_output(g->add_node(ir::OpKind::MatMul, {h, w2}, {}, {"y"})->outputs[0]);
  passes::Loss({"mse", "", "label"}).run(*g);
  passes::MixedPrecision(DType::BF16).run(*g);
  passes::Autodiff().run(*g);
  ir::verify(*g);
  int round_trips = 0, half_matmul_grads = 0;
  for (const ir::Node* n : g->nodes()) {
    const ir::Node* inner = n->op == ir::OpKind::Cast ? n->inputs[0]->producer : nullptr;
    if (inner && inner->op == ir::OpKind::Cast && inner->inputs[0]->type.dtype == n->outputs[0]->type.dtype)
      ++round_trips;
    if (n->op == ir::OpKind::MatMul && n->outputs[0]->type.dtype == DType::BF16 &&
        n->outputs[0]->name.find(".grad") != std::string::npos)
      ++half_matmul_grads;
  }
  EXPECT_EQ(round_trips, 0) << ir::print_graph(*g);
  EXPECT_GT(half_matmul_grads, 0) << "no half backward MatMul: the pattern is not there";
}

// fp16: a loss that overflows skips the step even where every gradient is finite. y = x + b
// with an MSE loss against labels of 1e20: (y - label)² overflows f32 (the loss is inf), but
// the gradient of b, 2(y - label)/n times the scale, is about -1e24, finite. The step is skipped
// and the scale halved; with finite labels the same plan updates b.
TEST(LossScaling, NonFiniteLossSkipsTheStep) {
  auto g = std::make_unique<ir::Graph>();
  ir::Value* x = g->add_input("x", TensorType{DType::F32, {2, 3}});
  ir::Value* b = g->add_parameter("b", test::random_normal({3}, 5));
  g->add_output(g->add_node(ir::OpKind::Add, {x, b}, {}, {"y"})->outputs[0]);
  passes::Loss({"mse", "", "label"}).run(*g);
  passes::MixedPrecision(DType::F16).run(*g);
  passes::Autodiff().run(*g);
  passes::Optimizer({}).run(*g);
  passes::DeadCodeElimination().run(*g);
  ir::verify(*g);
  std::unique_ptr<Session> s = Session::create(codegen::lower_to_plan(*g), {1});
  const Tensor b0 = s->read_state("b");
  auto step = [&](float label, int k) {
    s->set_input("x", Tensor(TensorType{DType::F32, {2, 3}}));
    s->set_input("label", Tensor::from_double(DType::F32, std::vector<double>(6, label), {2, 3}));
    s->set_input(passes::kLearningRateInput, Tensor::scalar_f32(0.1f));
    s->set_input(passes::kStepInput, Tensor::scalar_f32(float(k)));
    s->run();
    return *s->output(s->outputs().at(0).name).data<float>();
  };
  EXPECT_TRUE(std::isinf(step(1e20f, 1)));
  EXPECT_EQ(s->read_state("b").bytes, b0.bytes) << "the step with an inf loss was applied";
  EXPECT_EQ(read_scalar(*s, passes::kLossScaleSkippedSteps), 1.f);
  EXPECT_EQ(read_scalar(*s, passes::kLossScale), 32768.f);
  EXPECT_TRUE(std::isfinite(step(1.f, 2)));
  EXPECT_NE(s->read_state("b").bytes, b0.bytes) << "the finite step was not applied";
  EXPECT_EQ(read_scalar(*s, passes::kLossScaleSkippedSteps), 1.f);
}

// The update gate (loss scaling's all-finite check, and "apply" with --accumulate) is each
// update's apply operand: no Where between an update and the state it writes (SkippedStep and
// the accumulation tests check that the states then stay as they are).
TEST(LossScaling, UpdatesTakeTheGateAsTheirApplyOperand) {
  for (const auto& [kind, micro] : std::vector<std::pair<std::string, int64_t>>{{"adam", 1}, {"sgd", 2}}) {
    auto g = std::make_unique<ir::Graph>();
    ir::Value* x = g->add_input("x", TensorType{DType::F32, {2, 3}});
    ir::Value* w = g->add_parameter("w", test::random_normal({3, 4}, 5));
    g->add_output(g->add_node(ir::OpKind::MatMul, {x, w}, {}, {"y"})->outputs[0]);
    passes::Loss({"mse", "", "label"}).run(*g);
    passes::MixedPrecision(DType::F16).run(*g);
    passes::Autodiff().run(*g);
    passes::OptimizerOptions options;
    options.kind = kind;
    options.accumulate = micro;
    passes::Optimizer(options).run(*g);
    ir::verify(*g);
    int updates = 0;
    for (const ir::Node* n : g->nodes()) {
      if (n->op != ir::OpKind::AdamUpdate && n->op != ir::OpKind::SgdUpdate) continue;
      ++updates;
      const ir::Value* apply = n->inputs.back();
      ASSERT_NE(apply, nullptr) << kind;
      EXPECT_EQ(apply->type, (TensorType{DType::Bool, {}})) << kind;
      for (const ir::Value* out : n->outputs)
        for (const ir::Node* reader : g->users(out)) EXPECT_NE(reader->op, ir::OpKind::Where) << kind;
    }
    EXPECT_EQ(updates, 1) << kind;
  }
}

}  // namespace
}  // namespace dlc
