// One plan step run by its CPU kernel: the kernel looked up, the attributes decoded and the
// context (views of the step's operands at fixed addresses) built once, so that a run allocates
// nothing. The CPU session runs every step so, over its arena; the CUDA session runs a step with
// no CUDA path so (HOST "cpu"), over pinned copies of its operands.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dlc/attributes.h"
#include "runtime/cpu/kernel.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::cpu {

class StepKernel {
 public:
  /// Step `step` of `stage`, each operand buffer viewed at `address(buffer index)`. Throws
  /// dlc::Error for a kernel the CPU backend lacks or bad attributes.
  StepKernel(const plan::Stage& stage, const plan::Step& step, const std::function<void*(int32_t)>& address);
  StepKernel(const StepKernel&) = delete;  // the context points into this object
  StepKernel& operator=(const StepKernel&) = delete;

  /// Runs the kernel (its errors name the step).
  void run() const { fn_(*ctx_); }

  const std::string& name() const { return name_; }
  const std::string& kernel() const { return kernel_; }

 private:
  KernelFn fn_ = nullptr;
  std::string name_, kernel_;
  Attrs attrs_;
  std::unique_ptr<KernelState> state_;
  std::unique_ptr<KernelContext> ctx_;
};

}  // namespace dlc::cpu
