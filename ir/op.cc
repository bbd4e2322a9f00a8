// The op table's data, generated from ops.def.
#include "ir/op.h"

#include "ir/infer.h"

namespace dlc::ir {

namespace {
const OpInfo kOps[] = {
#define DLC_OP(name, min_in, max_in, min_out, max_out) \
  {#name, min_in, max_in, min_out, max_out, &infer_##name},
#include "ir/ops.def"
#undef DLC_OP
};
}  // namespace

const OpInfo& op_info(OpKind op) { return kOps[size_t(op)]; }

int num_ops() { return int(std::size(kOps)); }

std::optional<OpKind> parse_op(std::string_view name) {
  for (size_t i = 0; i < std::size(kOps); ++i)
    if (kOps[i].name == name) return OpKind(i);
  return std::nullopt;
}

}  // namespace dlc::ir
