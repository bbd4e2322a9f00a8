// ONNX elementwise ops: most map one-to-one onto the IR op of the same name.
#include <cstring>

#include "frontend/onnx_ops/translators.h"
#include "frontend/onnx_tensor.h"

namespace dlc::frontend {

// An op whose IR form has the ONNX name, inputs and attributes (minus the legacy `consumed_inputs`).
void translate_same_op(ImportContext& ctx) {
  auto op = ir::parse_op(ctx.node().op_type());
  if (!op) ctx.fail("no IR op of this name");
  std::vector<ir::Value*> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.has_input(i) ? ctx.input(i) : nullptr);
  Attrs attrs;
  for (const auto& a : ctx.node().attribute()) {
    if (a.name() == "consumed_inputs") continue;
    switch (a.type()) {
      case onnx::AttributeProto::INT: attrs.set(a.name(), int64_t(a.i())); break;
      case onnx::AttributeProto::FLOAT: attrs.set(a.name(), double(a.f())); break;
      case onnx::AttributeProto::STRING: attrs.set(a.name(), a.s()); break;
      case onnx::AttributeProto::INTS: attrs.set(a.name(), ctx.attr_ints(a.name())); break;
      case onnx::AttributeProto::FLOATS: attrs.set(a.name(), ctx.attr_floats(a.name())); break;
      default: ctx.fail("attribute '{}' has an unsupported type", a.name());
    }
  }
  ctx.set_output(0, ctx.emit(*op, inputs, std::move(attrs)));
}

void translate_identity(ImportContext& ctx) { ctx.set_output(0, ctx.input(0)); }

void translate_constant(ImportContext& ctx) {
  if (!ctx.has_attr("value")) ctx.fail("only the 'value' form of Constant is supported");
  ctx.set_output(0, ctx.constant(ctx.attr_tensor("value"), ctx.node().output(0)));
}

}  // namespace dlc::frontend
