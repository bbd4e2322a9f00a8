// A CUDA plan run on the emulated device (emulated_device.h), so that whole CUDA training steps
// are checked where no GPU is: the plan's generated kernels run emulated from their sources (each
// KERNEL step bound again with bind_cuda_step, the binding the compiler made), with the launches,
// arguments and multi-tensor tables the CUDA session would give them (kernel_launch.h) in one host
// allocation laid out as the device's (device_memory.h); a LIBRARY step (cuBLASLt, cuDNN) is the
// runtime's own LibraryCall (library_call.h), which the emulated programs link against the
// emulated cuBLASLt and cuDNN (emulated_cublaslt.cc, emulated_cudnn.cc); a HOST step is an alias,
// a copy, or the runtime's HostKernelStep (a step with no CUDA path, run by its CPU kernel) with
// its copies made by memcpy.
#pragma once

#include <memory>

#include "dlc/session.h"

namespace dlc::plan {
class Plan;
}

namespace dlc::emulation {

/// A session for `plan` (a single CUDA stage); SessionOptions' CUDA Graph choice changes nothing
/// here, and its cuDNN benchmark one asks the emulated cuDNN's Find calls instead of its
/// heuristics (the same one algorithm).
std::unique_ptr<Session> create_emulated_cuda_session(const plan::Plan& plan, SessionOptions options);

}  // namespace dlc::emulation
