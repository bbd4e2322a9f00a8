// The loss pass: cross_entropy (int64 class labels, mean over the batch like PyTorch), mse and
// l1 (mean over all elements), or output (the model already returns a scalar loss).
#include "passes/loss.h"

#include <fmt/format.h>

#include <numeric>

#include "dlc/error.h"

namespace dlc::passes {

namespace {

ir::Value* mean_of(ir::Graph& g, ir::Value* v) {
  std::vector<int64_t> axes(v->type.shape.size());
  std::iota(axes.begin(), axes.end(), 0);
  Attrs a;
  a.set("axes", axes);
  a.set("keepdims", int64_t(0));
  return g.add_node(ir::OpKind::ReduceMean, {v}, a, {g.unique_value_name("loss")}, "loss_mean")->outputs[0];
}

}  // namespace

bool Loss::run(ir::Graph& g) {
  if (g.outputs().empty()) throw Error("loss: the model has no outputs");
  ir::Value* out = g.outputs()[0];
  if (!options_.output.empty()) {
    out = nullptr;
    for (ir::Value* v : g.outputs())
      if (v->name == options_.output) out = v;
    if (!out) throw Error(fmt::format("loss: the model has no output named '{}'", options_.output));
  }
  if (g.find_value(options_.label))
    throw Error(fmt::format(
        "loss: the label name '{}' is already used in the model; pick another with --label", options_.label));
  ir::Value* loss = nullptr;
  const std::string& kind = options_.kind;
  if (kind == "output") {
    if (out->type.numel() != 1 || !is_floating(out->type.dtype))
      throw Error(fmt::format("loss: --loss output needs a scalar float output, '{}' is {}", out->name,
                              out->type.str()));
    loss = out;
  } else if (kind == "cross_entropy") {
    if (out->type.rank() < 2)
      throw Error(fmt::format("loss: cross_entropy needs [N, C, …] scores, output '{}' is {}", out->name,
                              out->type.str()));
    Shape label_shape = out->type.shape;
    label_shape.erase(label_shape.begin() + 1);
    ir::Value* label = g.add_input(options_.label, TensorType{DType::I64, label_shape}, ir::Role::Label);
    Attrs a;
    a.set("reduction", std::string("mean"));
    loss = g.add_node(ir::OpKind::SoftmaxCrossEntropyLoss, {out, label}, a, {g.unique_value_name("loss")},
                      "loss_cross_entropy")
               ->outputs[0];
  } else if (kind == "mse" || kind == "l1") {
    ir::Value* label = g.add_input(options_.label, out->type, ir::Role::Label);
    ir::Value* diff =
        g.add_node(ir::OpKind::Sub, {out, label}, {}, {g.unique_value_name("loss_diff")}, "loss_diff")
            ->outputs[0];
    ir::Value* per = kind == "mse"
                         ? g.add_node(ir::OpKind::Mul, {diff, diff}, {}, {""}, "loss_square")->outputs[0]
                         : g.add_node(ir::OpKind::Abs, {diff}, {}, {""}, "loss_abs")->outputs[0];
    loss = mean_of(g, per);
  } else if (kind == "bce_logits") {
    // PyTorch's BCEWithLogitsLoss in its stable form: max(x, 0) - x*y + log(1 + exp(-|x|)).
    ir::Value* label = g.add_input(options_.label, out->type, ir::Role::Label);
    auto op = [&](ir::OpKind kind, std::vector<ir::Value*> args, const char* name) {
      return g.add_node(kind, std::move(args), {}, {""}, name)->outputs[0];
    };
    ir::Value* relu = op(ir::OpKind::Relu, {out}, "loss_bce_relu");
    ir::Value* xy = op(ir::OpKind::Mul, {out, label}, "loss_bce_xy");
    ir::Value* neg_abs =
        op(ir::OpKind::Neg, {op(ir::OpKind::Abs, {out}, "loss_bce_abs")}, "loss_bce_neg_abs");
    ir::Value* log_term = op(ir::OpKind::Softplus, {neg_abs}, "loss_bce_softplus");
    ir::Value* per =
        op(ir::OpKind::Add, {op(ir::OpKind::Sub, {relu, xy}, "loss_bce_sub"), log_term}, "loss_bce");
    loss = mean_of(g, per);
  } else {
    throw Error(fmt::format("loss: unknown loss '{}' (cross_entropy, mse, l1, bce_logits, output)", kind));
  }
  std::vector<ir::Value*> outs = {loss};
  for (ir::Value* v : g.outputs())
    if (v != loss) outs.push_back(v);
  g.set_outputs(outs);
  stats_["losses_added"] = 1;
  return true;
}

}  // namespace dlc::passes
