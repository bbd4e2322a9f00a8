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
    kernels_.emplace(program.kernels[i], Kernel{k});
  }
}

CudaModule::~CudaModule() {
  if (library_) cudaLibraryUnload(library_);
}

const CudaModule::Kernel& CudaModule::find(std::string_view name) const {
  auto it = kernels_.find(std::string(name));
  if (it == kernels_.end())
    throw Error(fmt::format("CUDA module '{}' has no kernel '{}'", program_name_, name));
  return it->second;
}

cudaKernel_t CudaModule::kernel(std::string_view name) const { return find(name).handle; }

void CudaModule::launch(std::string_view name, dim3 grid, dim3 block, size_t shared_bytes,
                        cudaStream_t stream, void** args) const {
  const Kernel& k = find(name);
  const void* fn = reinterpret_cast<const void*>(k.handle);
  if (shared_bytes > k.shared_limit) {
    DLC_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared_bytes)));
    k.shared_limit = shared_bytes;
  }
  DLC_CUDA_CHECK(cudaLaunchKernel(fn, grid, block, args, shared_bytes, stream));
}

}  // namespace dlc::cuda
