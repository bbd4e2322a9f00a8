// The CUDA op table: how one step of a plan runs on a GPU. A step becomes a generated kernel (an
// emitter's KernelSource for its static shapes), a library call (cuBLASLt GEMM, cuDNN
// convolution, pooling, batch norm, tensor transform) recorded by name and parameters, or a
// host-side step with no kernel (a reshape's alias or device copy). An op with none of these is
// an error naming the step and its op; bind_cuda_plan may then run the step on the host with its
// CPU kernel instead (host_kernel_binding).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "dlc/attributes.h"
#include "dlc/error.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::codegen::cuda {

/// A step operand a kernel parameter points at (plan::CudaOperand); None is a null pointer.
struct OperandRef {
  enum class Kind { None, Input, Output };
  Kind kind = Kind::None;
  int index = 0;
  bool operator==(const OperandRef&) const = default;
};
inline OperandRef input_operand(int i) { return {OperandRef::Kind::Input, i}; }
inline OperandRef output_operand(int i) { return {OperandRef::Kind::Output, i}; }

struct StepBinding {
  enum class Kind { Kernel, Library, Host };
  Kind kind = Kind::Host;
  std::optional<KernelSource> kernel;  // Kernel
  std::vector<LaunchConfig> launches;  // Kernel: one per entry (optimizers size the grid per step)
  /// Kernel: the operand of every entry parameter the runtime does not supply itself
  /// (plan::is_runtime_kernel_param): "inN" / "outN" are input / output N unless a rule says else.
  std::map<std::string, OperandRef> args;
  std::vector<std::array<OperandRef, 4>> table;  // Kernel: a multi-tensor launch's rows
  std::vector<std::pair<int, int>> copies;       // (input, output) copied before the step runs
  std::string call;  // Library: "cublasLt.matmul", …; Host: "alias", "copy" or "cpu" (the CPU kernel)
  Attrs params;      // Library: the step's attributes and operand shapes
};

/// A step with no CUDA path: "step 'NAME' (op OP) has no CUDA path: WHY". Any dlc::Error a rule or
/// emitter throws (an unsupported dtype, an axis out of range, …) is reported as one.
struct NoCudaPathError : Error {
  NoCudaPathError(const std::string& message, std::string why);
  std::string why;  // the message's WHY
};

/// How step `step_index` of `stage` runs on CUDA. `plan` supplies constant operands (reduction
/// axes given as inputs). Throws NoCudaPathError.
StepBinding bind_cuda_step(const plan::Plan& plan, const plan::Stage& stage, int step_index);

/// The binding of a step run on the host by its CPU kernel (HOST "cpu"): the runtime copies its
/// operands from the device and its results back, in stream order.
StepBinding host_kernel_binding();

}  // namespace dlc::codegen::cuda
