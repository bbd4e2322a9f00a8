// The CUDA op table: how one step of a plan runs on a GPU. A step becomes a generated kernel (an
// emitter's KernelSource for its static shapes), a library call (cuBLASLt GEMM, cuDNN
// convolution, pooling, batch norm, tensor transform) recorded by name and parameters, or a
// host-side step with no kernel (a reshape's alias or device copy). An op with none of these is
// an error naming the step and its op.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "dlc/attributes.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::codegen::cuda {

struct StepBinding {
  enum class Kind { Kernel, Library, Host };
  Kind kind = Kind::Host;
  std::optional<KernelSource> kernel;  // Kernel
  std::vector<LaunchConfig> launches;  // Kernel: one per entry (optimizers size the grid per step)
  std::string call;                    // Library: "cublasLt.matmul", …; Host: "alias" or "copy"
  Attrs params;                        // Library: the step's attributes and operand shapes
};

/// How step `step_index` of `stage` runs on CUDA. `plan` supplies constant operands (reduction
/// axes given as inputs). Throws dlc::Error "step 'NAME' (op OP) has no CUDA path: WHY".
StepBinding bind_cuda_step(const plan::Plan& plan, const plan::Stage& stage, int step_index);

}  // namespace dlc::codegen::cuda
