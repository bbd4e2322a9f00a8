// Binds a lowered plan to CUDA: every step of its CUDA stages gets a CudaStep (a generated kernel,
// a library call or a host-side step, step_binding.h), and each distinct kernel source is
// compiled once and stored once in Plan.cuda_kernels, however many steps launch it. Compilation
// is a callback so that this stays pure text generation: the driver passes NVRTC.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::codegen::cuda {

/// What compiling one KernelSource gives.
struct CompiledKernel {
  std::string key;                         // identifies source + options (NvrtcCache::key)
  std::string cubin;                       // for the target architecture
  std::string ptx;                         // may be empty
  std::vector<std::string> lowered_names;  // one per entry, in order
};

using KernelCompiler = std::function<CompiledKernel(const KernelSource&)>;

struct CudaBindStats {
  int64_t kernel_steps = 0;       // steps bound to a generated kernel
  int64_t kernels = 0;            // distinct kernels compiled (Plan.cuda_kernels)
  int64_t library_calls = 0;      // steps bound to a library call
  int64_t host_steps = 0;         // steps with no device work or a device copy
  int64_t host_kernel_steps = 0;  // steps run on the host by their CPU kernel (HostFallback::CpuKernel)
};

/// What becomes of a step with no CUDA path: an error, or a step run on the host by its CPU kernel
/// (host_kernel_binding; CudaStep.host_reason says why), as ONNX Runtime falls back to its CPU
/// execution provider.
enum class HostFallback { Refuse, CpuKernel };

/// Binds every step of the plan's CUDA stages and fills plan.cuda_kernels, compiling each
/// distinct source with `compile` for `arch` on up to `jobs` threads at once (0: one per core;
/// `compile` must be safe to call concurrently, as NVRTC and NvrtcCache are). Kernels are stored
/// in the order of their first step, however the compiles interleave. Throws dlc::Error naming
/// the first step with no CUDA path (its node and op) unless `fallback` runs it on the host,
/// before compiling anything, or the first source (in that order) whose compile failed.
CudaBindStats bind_cuda_plan(plan::Plan& plan, const std::string& arch, const KernelCompiler& compile,
                             int jobs = 0, HostFallback fallback = HostFallback::Refuse);

}  // namespace dlc::codegen::cuda
