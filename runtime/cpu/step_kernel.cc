// A plan step bound to its CPU kernel (step_kernel.h).
#include "runtime/cpu/step_kernel.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "runtime/plan/plan_values.h"

namespace dlc::cpu {

StepKernel::StepKernel(const plan::Stage& stage, const plan::Step& step,
                       const std::function<void*(int32_t)>& address)
    : fn_(find_kernel(step.kernel())), name_(step.name()), kernel_(step.kernel()) {
  if (!fn_) throw Error(fmt::format("step '{}': the CPU backend has no kernel '{}'", name_, kernel_));
  attrs_ = plan::from_proto(step.attrs(), fmt::format("step '{}'", name_));
  ctx_.reset(new KernelContext{attrs_, {}, {}, &state_, name_, kernel_});
  auto view = [&](int32_t buffer) {
    if (buffer < 0) return TensorView{};
    const plan::Buffer& b = stage.buffers(buffer);
    return TensorView{DType(b.dtype()), Shape(b.dims().begin(), b.dims().end()), address(buffer)};
  };
  for (int32_t i : step.inputs()) ctx_->inputs.push_back(view(i));
  for (int32_t i : step.outputs()) ctx_->outputs.push_back(view(i));
}

}  // namespace dlc::cpu
