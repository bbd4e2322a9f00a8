// The CUDA half of a compile: after lowering for a CUDA device, binds the plan's steps to
// generated kernels compiled by NVRTC for the target architecture, library calls and host-side
// steps (codegen/cuda/plan_kernels.h). Needs a dlc built with the CUDA Toolkit (NVRTC), not a GPU.
#pragma once

#include <string>

#include "codegen/cuda/plan_kernels.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::driver {

/// Checks a --device value ("cpu", "cuda", "cuda:N") and returns the plan's stage device
/// ("cuda" becomes "cuda:0"); throws dlc::Error otherwise.
std::string plan_device(const std::string& device);

/// Checks an --arch value (sm_NN or sm_NNN with an optional a/f suffix); throws dlc::Error.
void check_arch(const std::string& arch);

/// Finishes a lowered plan for its device: checks each stage's device (plan_device, which also
/// turns "cuda" into "cuda:0") and binds the CUDA stages, compiling their kernels with NVRTC for
/// `arch`; CPU plans are left as they are. A step with no CUDA path runs on the host by its CPU
/// kernel if `host_fallback`, else it is an error. Throws dlc::Error for a bad device or
/// architecture, a refused step, a compile failure, or a dlc built without the CUDA Toolkit.
codegen::cuda::CudaBindStats finish_device_plan(plan::Plan& plan, const std::string& arch,
                                                bool host_fallback);

/// "note: …" lines for the steps of `plan` that run on the host (HOST "cpu"): each step's name, op
/// and reason, at most `limit` of them, then how many more; empty where there are none.
std::string host_kernel_notes(const plan::Plan& plan, int limit = 5);

}  // namespace dlc::driver
