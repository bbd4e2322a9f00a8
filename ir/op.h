// OpKind: the enum generated from the op table (ops.def), with each op's name and arity.
#pragma once

#include <optional>
#include <string_view>

namespace dlc::ir {

enum class OpKind : uint16_t {
#define DLC_OP(name, min_in, max_in, min_out, max_out) name,
#include "ir/ops.def"
#undef DLC_OP
};

struct InferContext;
using InferFn = void (*)(InferContext&);

struct OpInfo {
  std::string_view name;
  int min_inputs, max_inputs;    // max -1: variadic
  int min_outputs, max_outputs;  // max -1: variadic
  InferFn infer;                 // shape/type inference and attribute checks
};

const OpInfo& op_info(OpKind op);
inline std::string_view op_name(OpKind op) { return op_info(op).name; }
std::optional<OpKind> parse_op(std::string_view name);
int num_ops();

}  // namespace dlc::ir
