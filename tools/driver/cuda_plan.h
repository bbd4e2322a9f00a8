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
/// `arch`; CPU plans are left as they are. Throws dlc::Error for a bad device or architecture, a
/// step with no CUDA path, a compile failure, or a dlc built without the CUDA Toolkit.
codegen::cuda::CudaBindStats finish_device_plan(plan::Plan& plan, const std::string& arch);

}  // namespace dlc::driver
