// Training mode.
#include "passes/training_mode.h"

namespace dlc::passes {

bool TrainingMode::run(ir::Graph& g) {
  int64_t switched = 0;
  for (ir::Node* n : g.nodes()) {
    if (n->op != ir::OpKind::BatchNormalization || n->attrs.i("training_mode", 0) != 0) continue;
    ir::Value* mean = n->inputs[3];
    ir::Value* var = n->inputs[4];
    if (!mean->data || !var->data) continue;  // statistics that are not initializers stay as they are
    Attrs attrs = n->attrs;
    attrs.set("training_mode", int64_t(1));
    g.set_insertion_point(n);
    ir::Node* t =
        g.add_node(ir::OpKind::BatchNormalization, n->inputs, attrs,
                   {g.unique_value_name(n->outputs[0]->name + ".train"),
                    g.unique_value_name(mean->name + ".next"), g.unique_value_name(var->name + ".next")},
                   n->name + ".train");
    g.clear_insertion_point();
    ir::Value* old_y = n->outputs[0];
    const std::string y_name = old_y->name;
    g.replace_all_uses(old_y, t->outputs[0]);
    g.remove_node(n);
    g.rename_value(t->outputs[0], y_name);
    mean->role = var->role = ir::Role::State;
    g.add_state_update(t->outputs[1], mean);
    g.add_state_update(t->outputs[2], var);
    ++switched;
  }
  stats_["batchnorms_switched"] = switched;
  return switched > 0;
}

}  // namespace dlc::passes
