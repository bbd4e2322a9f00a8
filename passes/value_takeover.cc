// take_over_values (value_takeover.h): swaps each taken value with the new node's own result.
#include "passes/value_takeover.h"

namespace dlc::passes {

void take_over_values(ir::Node* node, const std::vector<ir::Value*>& taken) {
  for (size_t i = 0; i < taken.size(); ++i) {
    ir::Value* old = taken[i];
    if (!old) continue;
    ir::Value* temp = node->outputs[i];
    ir::Node* producer = old->producer;
    const int slot = old->producer_output;
    producer->outputs[size_t(slot)] = temp;
    temp->producer = producer;
    temp->producer_output = slot;
    node->outputs[i] = old;
    old->producer = node;
    old->producer_output = int(i);
  }
}

}  // namespace dlc::passes
