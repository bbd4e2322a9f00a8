// The textual form of the IR (MLIR-flavoured), the format of every pass test, `dlc opt` and
// `dlc inspect --ir`. parse_graph (ir/parser.h) reads it back; print -> parse -> print is
// identical.
//
//   graph @main {
//     input %x : f32[2,3]
//     label %label : i64[2]
//     param %w : f32[3,4] = [0.5, -1, 0.25, ...]
//     state %running_mean : f32[3] = [0, 0, 0]
//     constant %c : i64[2] = [1, 2]
//     %y = MatMul(%x, %w) {transpose_b = 1} : f32[2,4] loc("node_name")
//     %a, %b = Split(%y) {axis = 1, split = [2, 2]} : f32[2,2], f32[2,2] loc("split0")
//     %m, _ = Dropout(%x) {ratio = 0.5} : f32[2,3], _ loc("drop")
//     %n = Clip(%x, _, %c2) : f32[2,3] loc("clip")
//     return %y, %a
//   }
//
// Decisions beyond the summary above:
// - Declarations come in a fixed order: graph inputs (input/label, in signature order), then
//   initializers (param/state/constant, in creation order), then nodes in schedule order. The
//   keyword of a declaration is the value's role name; a declaration with `= [...]` data is an
//   initializer, one without is a graph input.
// - Names: `%name` / `@name` when the name matches [A-Za-z0-9_.]+, else a quoted string with C
//   escapes (`\"`, `\\`, `\n`, `\t`, `\xHH` for other bytes outside printable ASCII).
// - Tensor data (initializers and tensor attributes alike) is one flat row-major list: f32, f16
//   and bf16 as float with {:.9g}, f64 with {:.17g}, integers plain, bool 0/1, NaN as `nan`,
//   infinities as `inf`/`-inf`. So a tensor attribute prints as `tensor<f32[2]>[1, 2.5]`.
// - Float attributes print the shortest decimal that reads back to the same double, with `.0`
//   appended when that has neither `.` nor an exponent (`1.0`, `1e-05`, `nan`, `inf`).
//   Float lists print every element that way; an empty list prints `[]` (read as an int list).
// - Attributes with no entries print no braces. Attribute keys that are not plain identifiers
//   are quoted.
// - An absent optional output prints `_` both in the result list and in the type list. A
//   produced value whose role is not `activation` has its role before its type
//   (`: gradient f32[2]`).
// - Every node ends with `loc("NODE_NAME")`. `//` starts a comment to the end of the line.
// - PrintOptions::elide_above replaces the data of tensors with more elements than that by
//   `<elided N elements>`; such text is for reading only and does not parse.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "dlc/attributes.h"
#include "ir/graph.h"

namespace dlc::ir {

struct PrintOptions {
  /// Tensors with more elements than this print as `<elided N elements>`; -1: print all.
  int64_t elide_above = -1;
};

void print_graph(std::ostream& os, const Graph& graph, const PrintOptions& options = {});
std::string print_graph(const Graph& graph, const PrintOptions& options = {});

/// One attribute value in the textual form (`1`, `1.0`, `[1, 2]`, `"s"`, `tensor<…>[…]`).
std::string print_attr_value(const AttrValue& value, const PrintOptions& options = {});
/// A name as it appears after `%` or `@`: bare when plain, else quoted and escaped.
std::string print_name(const std::string& name);

}  // namespace dlc::ir
