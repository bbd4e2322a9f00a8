// A loaded cubin: the kernels of one compiled program on the current device, launched by name.
// Uses the CUDA runtime's library API (cudaLibraryLoadData), so dlc needs no link to libcuda.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>
#include <unordered_map>

#include "runtime/cuda/nvrtc_compiler.h"

namespace dlc::cuda {

class CudaModule {
 public:
  /// Loads `program`'s cubin. Throws dlc::Error (e.g. no device, or a cubin for another arch).
  explicit CudaModule(const CompiledProgram& program);
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  /// The kernel `name` (one of the program's kernels).
  cudaKernel_t kernel(std::string_view name) const;

  /// Launches kernel `name`; `args[i]` points at the value of parameter i. A kernel's dynamic
  /// shared-memory limit is raised past 48 KB once, on the first launch that needs it.
  void launch(std::string_view name, dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
              void** args) const;

 private:
  struct Kernel {
    cudaKernel_t handle = nullptr;
    mutable size_t shared_limit = 48 * 1024;  // raised by launch
  };
  const Kernel& find(std::string_view name) const;

  std::string program_name_;
  cudaLibrary_t library_ = nullptr;
  std::unordered_map<std::string, Kernel> kernels_;
};

}  // namespace dlc::cuda
