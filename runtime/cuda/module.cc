// Loading cubins and launching their kernels through the CUDA runtime (module.h).
#include "runtime/cuda/module.h"

#include <fmt/format.h>

#include "runtime/cuda/check.h"

namespace dlc::cuda {

CudaModule::CudaModule(const CompiledProgram& program) : program_name_(program.name) {
  DLC_CUDA_CHECK(
      cudaLibraryLoadData(&library_, program.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  for (size_t i = 0; i < program.kernels.size(); ++i) {
    cudaKernel_t k = nullptr;
    DLC_CUDA_CHECK(cudaLibraryGetKernel(&k, library_, program.lowered_names[i].c_str()));
    kernels_.emplace(program.kernels[i], k);
  }
}

CudaModule::~CudaModule() {
  if (library_) cudaLibraryUnload(library_);
}

cudaKernel_t CudaModule::kernel(std::string_view name) const {
  auto it = kernels_.find(std::string(name));
  if (it == kernels_.end())
    throw Error(fmt::format("CUDA module '{}' has no kernel '{}'", program_name_, name));
  return it->second;
}

void CudaModule::launch(std::string_view name, dim3 grid, dim3 block, size_t shared_bytes,
                        cudaStream_t stream, void** args) const {
  cudaKernel_t k = kernel(name);
  if (shared_bytes > 48 * 1024)
    DLC_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(k),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
  DLC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(k), grid, block, args, shared_bytes, stream));
}

}  // namespace dlc::cuda
