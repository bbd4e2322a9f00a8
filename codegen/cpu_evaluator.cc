// One-node evaluation with the CPU kernels.
#include "codegen/cpu_evaluator.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "runtime/cpu/kernel.h"

namespace dlc::codegen {

std::vector<Tensor> CpuEvaluator::evaluate(const ir::Node& node, const std::vector<const Tensor*>& inputs) {
  std::string kernel(op_name(node.op));
  cpu::KernelFn fn = cpu::find_kernel(kernel);
  if (!fn) throw Error(fmt::format("node '{}': no CPU kernel for {}", node.name, kernel));
  std::vector<Tensor> outs;
  for (const ir::Value* v : node.outputs) outs.emplace_back(v ? Tensor(v->type) : Tensor());
  // A present tensor with no elements still needs a non-null pointer.
  static uint8_t empty_sentinel;
  auto view = [&](const Tensor& t) {
    uint8_t* data = t.bytes.empty() ? &empty_sentinel : const_cast<uint8_t*>(t.bytes.data());
    return cpu::TensorView{t.type.dtype, t.type.shape, data};
  };
  cpu::KernelContext ctx{node.attrs, {}, {}, nullptr, node.name, kernel};
  for (const Tensor* t : inputs) ctx.inputs.push_back(t ? view(*t) : cpu::TensorView{});
  for (size_t i = 0; i < outs.size(); ++i)
    ctx.outputs.push_back(node.outputs[i] ? view(outs[i]) : cpu::TensorView{});
  fn(ctx);
  return outs;
}

}  // namespace dlc::codegen
