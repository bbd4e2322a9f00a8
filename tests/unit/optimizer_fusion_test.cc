// Optimizer fusion (passes/optimizer_fusion.h) and the MultiTensorUpdate CPU kernel: graphs of
// per-parameter updates with state updates, merged and not, trained for two steps on the CPU
// runtime (1 and 2 threads, tensors large enough for the parallel path) give the same parameters
// and optimizer state bit for bit, with the state still updated in place, the same flops and one
// step per group; updates that differ in op, attributes, scalar operands or dtype, or whose
// operands come later in the schedule, are not merged. The merged graph round-trips through the
// textual IR.
#include <gtest/gtest.h>

#include <random>

#include "codegen/flops.h"
#include "codegen/lower.h"
#include "dlc/session.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/fusion.h"
#include "passes/optimizer_fusion.h"

namespace dlc {
namespace {

using ir::OpKind;

Tensor random_tensor(DType t, const Shape& dims, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(size_t(num_elements(dims)));
  for (double& x : v) x = dist(rng);
  return Tensor::from_double(t, v, dims);
}

Attrs adam_attrs(double beta1 = 0.9) {
  Attrs a;
  a.set("beta1", beta1);
  a.set("beta2", 0.999);
  a.set("eps", 1e-8);
  a.set("weight_decay", 0.01);
  a.set("decoupled", int64_t(1));
  return a;
}

Attrs sgd_attrs() {
  Attrs a;
  a.set("momentum", 0.9);
  a.set("dampening", 0.1);
  a.set("nesterov", int64_t(1));
  a.set("weight_decay", 0.001);
  return a;
}

Attrs rmsprop_attrs() {
  Attrs a;
  a.set("alpha", 0.9);
  a.set("eps", 1e-6);
  a.set("weight_decay", 0.01);
  a.set("momentum", 0.5);
  a.set("centered", int64_t(1));
  return a;
}

// Builds graphs of updates: each update gets a parameter, a gradient input and its state, and
// registers its results as the state updates, as the optimizer pass does.
class UpdateGraph {
 public:
  explicit UpdateGraph(ir::Graph& g) : g_(g) {
    lr_ = g.add_input("lr", {DType::F32, {}});
    step_ = g.add_input("step", {DType::F32, {}});
    g.add_output(g.add_node(OpKind::Mul, {lr_, lr_}, {}, {"lr2"}, "lr2")->outputs[0]);
  }
  ir::Graph& graph() const { return g_; }

  /// An update of `op` for a new parameter of `dims`; `grad` defaults to a new input.
  ir::Node* add(OpKind op, const Shape& dims, const Attrs& attrs, ir::Value* lr = nullptr,
                DType dtype = DType::F32, ir::Value* grad = nullptr) {
    const std::string name = "p" + std::to_string(++count_);
    ir::Value* p = g_.add_parameter(name, random_tensor(dtype, dims, count_, -1, 1));
    if (!grad) grad = g_.add_input(name + ".grad", {dtype, dims});
    const auto state = [&](const char* suffix) {
      return g_.add_parameter(name + suffix, random_tensor(dtype, dims, 100 + count_, 0, 0.5),
                              ir::Role::State);
    };
    std::vector<ir::Value*> in = {p, grad};
    std::vector<ir::Value*> updated = {p};
    if (op == OpKind::SgdUpdate) {
      in.push_back(state(".momentum"));
      in.push_back(lr ? lr : lr_);
    } else if (op == OpKind::AdamUpdate) {
      in.push_back(state(".exp_avg"));
      in.push_back(state(".exp_avg_sq"));
      in.push_back(lr ? lr : lr_);
      in.push_back(step_);
    } else {
      in.push_back(state(".square_avg"));
      in.push_back(lr ? lr : lr_);
      in.push_back(state(".grad_avg"));
      in.push_back(state(".momentum_buffer"));
    }
    for (size_t i = 2; i < in.size(); ++i)
      if (in[i]->role == ir::Role::State) updated.push_back(in[i]);
    std::vector<std::string> names;
    for (ir::Value* s : updated) names.push_back(s->name + ".next");
    ir::Node* n = g_.add_node(op, in, attrs, names, name + ".update");
    for (size_t i = 0; i < updated.size(); ++i) g_.add_state_update(n->outputs[i], updated[i]);
    return n;
  }

 private:
  ir::Graph& g_;
  ir::Value *lr_ = nullptr, *step_ = nullptr;
  uint32_t count_ = 0;
};

using Build = std::function<void(UpdateGraph&)>;

int count(const ir::Graph& g, OpKind op) {
  int n = 0;
  for (const ir::Node* node : g.nodes()) n += node->op == op;
  return n;
}

// Every state after two steps (lr 1e-2, step 1 and 2, random gradients).
std::map<std::string, Tensor> train(const plan::Plan& plan, const ir::Graph& g, int threads) {
  std::unique_ptr<Session> s = Session::create(plan, {threads});
  for (int k = 0; k < 2; ++k) {
    uint32_t seed = 1000 + 10 * uint32_t(k);
    for (const ir::Value* v : g.inputs()) {
      if (v->name == "lr")
        s->set_input(v->name, Tensor::from_double(DType::F32, {1e-2}, {}));
      else if (v->name == "step")
        s->set_input(v->name, Tensor::from_double(DType::F32, {double(k + 1)}, {}));
      else
        s->set_input(v->name, random_tensor(v->type.dtype, v->type.shape, seed++, -2, 2));
    }
    s->run();
  }
  std::map<std::string, Tensor> state;
  for (const std::string& name : s->state_names()) state[name] = s->read_state(name);
  return state;
}

int64_t copy_steps(const plan::Plan& p) {
  int64_t n = 0;
  for (const plan::Step& step : p.stages(0).steps()) n += step.kernel() == "Identity";
  return n;
}

// Merges a copy of `build`'s graph; expects `merged` updates merged into `groups` nodes and, when
// `run`, the unmerged graph's training bit for bit.
void check_merge(const Build& build, int64_t merged, int groups, bool run = true) {
  ir::Graph plain, fused;
  UpdateGraph plain_builder(plain), fused_builder(fused);
  build(plain_builder);
  build(fused_builder);
  passes::Fusion fusion;
  EXPECT_EQ(fusion.run(fused), merged > 0);
  ir::verify(fused);
  const std::string text = ir::print_graph(fused);
  EXPECT_EQ(fusion.stats().at("optimizer_updates_merged"), merged) << text;
  EXPECT_EQ(count(fused, OpKind::MultiTensorUpdate), groups) << text;
  EXPECT_EQ(fused.num_nodes(), plain.num_nodes() - size_t(merged) + size_t(groups));
  EXPECT_EQ(ir::print_graph(*ir::parse_graph(text)), text);
  if (!run) return;

  const plan::Plan plain_plan = codegen::lower_to_plan(plain), fused_plan = codegen::lower_to_plan(fused);
  EXPECT_EQ(fused_plan.flops_per_step(), plain_plan.flops_per_step());
  EXPECT_EQ(copy_steps(plain_plan), 0) << "the unmerged updates write their state in place";
  EXPECT_EQ(copy_steps(fused_plan), 0) << "the merged updates write their state in place";
  const std::map<std::string, Tensor> want = train(plain_plan, plain, 1);
  for (int threads : {1, 2}) {
    const std::map<std::string, Tensor> got = train(fused_plan, fused, threads);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [name, value] : want)
      EXPECT_EQ(got.at(name), value) << name << ", " << threads << " threads";
  }
}

TEST(OptimizerFusion, MergesAdamUpdates) {
  check_merge(
      [](UpdateGraph& u) {
        u.add(OpKind::AdamUpdate, {3, 4}, adam_attrs());
        u.add(OpKind::AdamUpdate, {65536}, adam_attrs());  // the largest that merges; the parallel path
        u.add(OpKind::AdamUpdate, {}, adam_attrs());
        u.add(OpKind::AdamUpdate, {5, 1, 2}, adam_attrs());
      },
      4, 1);
}

TEST(OptimizerFusion, MergesSgdAndRmspropUpdates) {
  check_merge(
      [](UpdateGraph& u) {
        u.add(OpKind::SgdUpdate, {40000}, sgd_attrs());
        u.add(OpKind::SgdUpdate, {30000, 2}, sgd_attrs());
        u.add(OpKind::SgdUpdate, {7}, sgd_attrs());
      },
      3, 1);
  check_merge(
      [](UpdateGraph& u) {
        u.add(OpKind::RmspropUpdate, {32768, 2}, rmsprop_attrs());
        u.add(OpKind::RmspropUpdate, {9}, rmsprop_attrs());
      },
      2, 1);
}

TEST(OptimizerFusion, OneNodePerKindAndAttributes) {
  // Two kinds and two attribute sets: three groups of two; the lone update stays as it is.
  check_merge(
      [](UpdateGraph& u) {
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
        u.add(OpKind::SgdUpdate, {6}, sgd_attrs());
        u.add(OpKind::AdamUpdate, {6}, adam_attrs(0.8));
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
        u.add(OpKind::SgdUpdate, {6}, sgd_attrs());
        u.add(OpKind::AdamUpdate, {6}, adam_attrs(0.8));
        u.add(OpKind::RmspropUpdate, {6}, rmsprop_attrs());
      },
      6, 3);
}

TEST(OptimizerFusion, LargeParametersKeepTheirOwnUpdate) {
  // Over 65536 elements an update stays alone (the schedule frees its gradient early); the two
  // small ones still merge.
  check_merge(
      [](UpdateGraph& u) {
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
        u.add(OpKind::AdamUpdate, {65537}, adam_attrs());
        u.add(OpKind::AdamUpdate, {7}, adam_attrs());
      },
      2, 1);
}

TEST(OptimizerFusion, DifferentAttributesAreNotMerged) {
  check_merge(
      [](UpdateGraph& u) {
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
        u.add(OpKind::AdamUpdate, {6}, adam_attrs(0.8));
      },
      0, 0);
}

TEST(OptimizerFusion, DifferentLearningRatesAreNotMerged) {
  check_merge(
      [](UpdateGraph& u) {
        ir::Value* lr2 = u.graph().add_input("lr_other", {DType::F32, {}});
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
        u.add(OpKind::AdamUpdate, {6}, adam_attrs(), lr2);
        u.add(OpKind::SgdUpdate, {6}, sgd_attrs(), lr2);
        u.add(OpKind::SgdUpdate, {6}, sgd_attrs());
      },
      0, 0);
}

TEST(OptimizerFusion, OperandsProducedAfterTheFirstUpdateStartAGroup) {
  // p2's gradient is computed after p1's update, so p2 cannot join p1's merged node (which takes
  // p1's place); p3's gradient is an input, so p3 does.
  check_merge(
      [](UpdateGraph& u) {
        ir::Graph& g = u.graph();
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
        ir::Value* x = g.add_input("x", {DType::F32, {6}});
        ir::Value* grad = g.add_node(OpKind::Mul, {x, x}, {}, {"late_grad"}, "late_grad")->outputs[0];
        u.add(OpKind::AdamUpdate, {6}, adam_attrs(), nullptr, DType::F32, grad);
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
      },
      2, 1);
}

TEST(OptimizerFusion, SixteenBitUpdatesAreNotMerged) {
  check_merge(
      [](UpdateGraph& u) {
        u.add(OpKind::AdamUpdate, {6}, adam_attrs(), nullptr, DType::F16);
        u.add(OpKind::AdamUpdate, {6}, adam_attrs(), nullptr, DType::F16);
        u.add(OpKind::AdamUpdate, {6}, adam_attrs());
      },
      0, 0, false);
}

}  // namespace
}  // namespace dlc
