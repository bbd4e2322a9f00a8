// The CUDA bindings of a plan (Step.cuda, Plan.cuda_kernels): which stages are CUDA stages, the
// structural checks a plan gets on load, and the counts `dlc inspect --stats` reports.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/plan/plan.pb.h"

namespace dlc::plan {

/// Whether the CUDA runtime supplies a generated kernel's parameter `param` itself: "workspace",
/// "workspace+N" (N bytes into it), and a multi-tensor launch's "table", "num_tensors" and
/// "num_chunks". Every other parameter is a step operand (CudaStep.args).
bool is_runtime_kernel_param(const std::string& param);

/// The buffer index `operand` refers to: the step's input or output buffer, -1 for NONE, an absent
/// operand or an index out of range.
int32_t operand_buffer(const Step& step, const CudaOperand& operand);

/// The HOST call of a step run on the host by its CPU kernel (a step with no CUDA path).
inline constexpr const char kHostKernelCall[] = "cpu";
/// Whether `step` is bound to HOST kHostKernelCall.
bool is_host_kernel_step(const Step& step);

/// Whether a stage device names a CUDA device ("cuda", "cuda:N").
bool is_cuda_device(const std::string& device);
/// Whether any stage of the plan runs on a CUDA device.
bool has_cuda_stage(const Plan& plan);

/// Checks every stage's device ("cpu", empty for cpu, or a CUDA device), that each step of a CUDA stage is
/// bound (a kernel index into cuda_kernels with one launch per entry, or a library or host call) and that CPU
/// stages have no bindings, and that each kernel has a cubin and entries. Throws dlc::Error naming `what` and
/// the step.
void validate_cuda_steps(const Plan& plan, const std::string& what);

struct CudaStepCounts {
  int64_t generated_kernels = 0;  // distinct compiled kernels (Plan.cuda_kernels)
  int64_t kernel_steps = 0;       // steps that launch one of them
  int64_t library_calls = 0;      // steps bound to cuBLASLt / cuDNN calls
  int64_t host_steps = 0;         // aliases and device copies
  int64_t host_kernel_steps = 0;  // steps run on the host by their CPU kernel (HOST "cpu")
};
CudaStepCounts count_cuda_steps(const Plan& plan);

}  // namespace dlc::plan
