// The pass interface: a named transformation of a graph that says whether it changed anything
// and counts what it did.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "ir/graph.h"

namespace dlc::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view summary() const = 0;
  /// Returns true if the graph changed.
  virtual bool run(ir::Graph& graph) = 0;
  /// Statistics of the last run (e.g. "nodes_removed" -> 3).
  const std::map<std::string, int64_t>& stats() const { return stats_; }

 protected:
  std::map<std::string, int64_t> stats_;
};

}  // namespace dlc::passes
