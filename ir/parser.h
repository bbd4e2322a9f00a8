// The IR parser: reads the textual form written by ir/printer.h back into a Graph. Nodes are
// built with Graph::add_node_typed; every printed output type is checked against shape
// inference and the finished graph is verified (ir::verify). Errors are dlc::Error with
// `FILE:LINE:COL: message`.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace dlc::ir {

/// Parses one graph. `file` names the source in errors; `first_line` is the line number of the
/// first line of `text` within it (for a chunk of a file split by `// -----`).
std::unique_ptr<Graph> parse_graph(std::string_view text, const std::string& file = "<input>",
                                   int first_line = 1);
/// Reads and parses a file holding one graph.
std::unique_ptr<Graph> parse_graph_file(const std::string& path);

/// A chunk of a file split at lines `// -----`, with the line number where it starts.
struct TextChunk {
  std::string text;
  int first_line = 1;
};
std::vector<TextChunk> split_chunks(std::string_view text);

}  // namespace dlc::ir
