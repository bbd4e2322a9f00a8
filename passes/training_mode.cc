// Training mode: BatchNormalization on batch statistics, running statistics as state; Dropout
// with its mask as an output and a run counter as its random offset.
#include "passes/training_mode.h"

namespace dlc::passes {

namespace {

// Replaces `n` by a node of the same op with `inputs`, `attrs` and `outputs` (n's outputs keep
// their value names); returns the new node.
ir::Node* rebuild(ir::Graph& g, ir::Node* n, std::vector<ir::Value*> inputs, Attrs attrs,
                  std::vector<std::string> outputs) {
  outputs.insert(outputs.begin(), g.unique_value_name(n->outputs[0]->name + ".train"));
  g.set_insertion_point(n);
  ir::Node* t = g.add_node(n->op, std::move(inputs), std::move(attrs), outputs, n->name + ".train");
  g.clear_insertion_point();
  g.replace_node(n, t->outputs);
  return t;
}

// BatchNormalization with initializer statistics: batch statistics, running statistics as state.
bool switch_batch_norm(ir::Graph& g, ir::Node* n) {
  if (n->attrs.i("training_mode", 0) != 0) return false;
  ir::Value* mean = n->inputs[3];
  ir::Value* var = n->inputs[4];
  if (!mean->data || !var->data) return false;  // statistics that are not initializers stay as they are
  Attrs attrs = n->attrs;
  attrs.set("training_mode", int64_t(1));
  attrs.set("running_var_unbiased", int64_t(1));  // PyTorch's update, not ONNX's biased one
  ir::Node* t =
      rebuild(g, n, n->inputs, attrs,
              {g.unique_value_name(mean->name + ".next"), g.unique_value_name(var->name + ".next")});
  mean->role = var->role = ir::Role::State;
  g.add_state_update(t->outputs[1], mean);
  g.add_state_update(t->outputs[2], var);
  return true;
}

// The i64 state counter of training runs (0 at first), advanced by one after every run.
ir::Value* run_counter(ir::Graph& g) {
  ir::Value* counter =
      g.add_parameter(g.unique_value_name(kDropoutCounter), Tensor::from_int64({0}, {}), ir::Role::State);
  ir::Value* one = g.add_constant(g.unique_value_name(counter->name + ".one"), Tensor::from_int64({1}, {}));
  ir::Node* next = g.add_node(ir::OpKind::Add, {counter, one}, {},
                              {g.unique_value_name(counter->name + ".next")}, counter->name + ".advance");
  g.add_state_update(next->outputs[0], counter);
  return counter;
}

// A Dropout without an offset takes the run counter as its Philox offset and outputs its mask.
bool prepare_dropout(ir::Graph& g, ir::Node* n, ir::Value*& counter) {
  if (n->inputs.size() > 1 && n->inputs[1]) return false;
  if (!counter) counter = run_counter(g);
  const bool has_mask = n->outputs.size() > 1 && n->outputs[1];
  const std::string mask_name = has_mask ? n->outputs[1]->name : n->outputs[0]->name + ".mask";
  rebuild(g, n, {n->inputs[0], counter}, n->attrs, {g.unique_value_name(mask_name + ".train")});
  return true;
}

}  // namespace

bool TrainingMode::run(ir::Graph& g) {
  int64_t switched = 0, dropouts = 0;
  ir::Value* counter = nullptr;
  for (ir::Node* n : g.nodes()) {
    if (n->op == ir::OpKind::BatchNormalization)
      switched += switch_batch_norm(g, n);
    else if (n->op == ir::OpKind::Dropout)
      dropouts += prepare_dropout(g, n, counter);
  }
  stats_["batchnorms_switched"] = switched;
  stats_["dropouts_prepared"] = dropouts;
  return switched + dropouts > 0;
}

}  // namespace dlc::passes
