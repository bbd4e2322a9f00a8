// The CUDA session: runs a plan compiled with `dlc compile --device cuda[:N]` on that GPU.
// Session::create picks it for a plan whose stage is a CUDA device, in a dlc built with CUDA.
#pragma once

#include <memory>

#include "dlc/session.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::cuda {

/// Throws dlc::Error before allocating anything when there is no such GPU, when a step's library
/// call has no implementation yet, or when the plan does not fit in the GPU's free memory.
std::unique_ptr<Session> create_cuda_session(const plan::Plan& plan, SessionOptions options);

}  // namespace dlc::cuda
