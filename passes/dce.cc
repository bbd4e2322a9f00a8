// Dead-code elimination.
#include "passes/dce.h"

namespace dlc::passes {

bool DeadCodeElimination::run(ir::Graph& graph) {
  int nodes = graph.remove_dead_nodes();
  int inits = graph.remove_unused_initializers();
  stats_["nodes_removed"] = nodes;
  stats_["initializers_removed"] = inits;
  return nodes + inits > 0;
}

}  // namespace dlc::passes
