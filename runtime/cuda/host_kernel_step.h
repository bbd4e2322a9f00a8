// A step of a CUDA stage run on the host by its CPU kernel (CudaStep HOST "cpu": a step with no
// CUDA path, as ONNX Runtime falls back to its CPU execution provider). The distinct buffers the
// step reads are copied from the device arena into host memory, the kernel runs there, and the
// buffers it writes are copied back. This class lists the copies and runs the kernel without any
// CUDA call: the CUDA session enqueues them on its stream (cudaMemcpyAsync from and to pinned
// memory around a cudaLaunchHostFunc, all stream-ordered, so a CUDA Graph captures them too); the
// emulated session, whose arena is host memory, makes them with memcpy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cpu/step_kernel.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::cuda {

/// A copy of `bytes` bytes (host or device memory, as the caller enqueues it).
struct ByteCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
};

class HostKernelStep {
 public:
  /// Bytes of host memory `step` needs: each distinct operand buffer, 64-byte aligned.
  static size_t host_bytes(const plan::Stage& stage, const plan::Step& step);
  /// The most any host kernel step of `stage` needs: the steps run one after another and share it.
  static size_t stage_host_bytes(const plan::Stage& stage);

  /// `step` of `stage` with its buffers at `arena` + offset on the device and packed into `host`
  /// (host_bytes of it) on the host. Throws dlc::Error as cpu::StepKernel does.
  HostKernelStep(const plan::Stage& stage, const plan::Step& step, uint8_t* arena, uint8_t* host);

  const std::vector<ByteCopy>& to_host() const { return to_host_; }      // before the run: inputs
  const std::vector<ByteCopy>& to_device() const { return to_device_; }  // after it: outputs

  /// Runs the kernel on the host copies. A host function cannot throw: the first error is kept
  /// for take_error.
  void run() noexcept;
  /// The first error of the runs since the last call ("" if none), cleared.
  std::string take_error();

  const std::string& name() const { return kernel_->name(); }

 private:
  std::unique_ptr<cpu::StepKernel> kernel_;
  std::vector<ByteCopy> to_host_, to_device_;
  std::mutex error_mutex_;  // run() is called on a CUDA driver thread
  std::string error_;
};

}  // namespace dlc::cuda
