// ONNX's ai.onnx.preview.training Gradient onto the IR Gradient op, which the expand-gradients
// pass replaces by the backward nodes of autodiff. Only the form where the node's inputs are the
// very values its `xs` (then `zs`) attribute names is supported, i.e. the gradient at the values
// the graph computes; `zs` are held constant.
#include "frontend/onnx_ops/translators.h"

namespace dlc::frontend {

void translate_gradient(ImportContext& ctx) {
  const std::vector<std::string> xs = ctx.attr_strings("xs"), zs = ctx.attr_strings("zs");
  const std::string y = ctx.attr_string("y", "");
  if (xs.empty() || y.empty()) ctx.fail("attributes 'xs' and 'y' are required");
  if (ctx.num_inputs() != int(xs.size() + zs.size()))
    ctx.fail("has {} inputs for {} xs and {} zs", ctx.num_inputs(), xs.size(), zs.size());
  if (ctx.num_outputs() != int(xs.size())) ctx.fail("has {} outputs for {} xs", ctx.num_outputs(), xs.size());
  std::vector<ir::Value*> inputs = {ctx.value(y)};
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const std::string& named = size_t(i) < xs.size() ? xs[size_t(i)] : zs[size_t(i) - xs.size()];
    if (ctx.node().input(i) != named)
      ctx.fail("input {} is '{}', not '{}': feeding other values than the graph's is not supported", i,
               ctx.node().input(i), named);
    if (size_t(i) < xs.size()) inputs.push_back(ctx.input(i));
  }
  const std::vector<ir::Value*> grads =
      ctx.emit_multi(ir::OpKind::Gradient, inputs, {}, std::vector<bool>(xs.size(), true));
  for (size_t i = 0; i < grads.size(); ++i) ctx.set_output(int(i), grads[i]);
}

}  // namespace dlc::frontend
