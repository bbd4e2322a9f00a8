// CUDA device queries and DeviceBuffer (device.h).
#include "runtime/cuda/device.h"

#include <fmt/format.h>

#include <utility>

#include "dlc/error.h"
#include "runtime/cuda/check.h"

namespace dlc::cuda {

int cuda_device_count() {
  int n = 0;
  const cudaError_t status = cudaGetDeviceCount(&n);
  if (status == cudaSuccess) return n;
  cudaGetLastError();  // clear the sticky "no driver" / "no device" error
  // A driver that is there but older than the runtime is no "no GPU": say what to update.
  int driver = 0;
  if (status == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    throw Error(
        fmt::format("the NVIDIA driver supports CUDA up to {}.{}, older than the CUDA {}.{} runtime dlc was "
                    "built with; update the driver",
                    driver / 1000, driver % 1000 / 10, CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10));
  return 0;
}

std::string device_description(int ordinal) {
  cudaDeviceProp prop{};
  DLC_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  return fmt::format("{} (sm_{}{}, {} GiB)", prop.name, prop.major, prop.minor,
                     prop.totalGlobalMem / (size_t(1) << 30));
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes) DLC_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const void* host) {
  if (bytes_) DLC_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes_, cudaMemcpyHostToDevice));
}

void DeviceBuffer::download(void* host) const {
  if (bytes_) DLC_CUDA_CHECK(cudaMemcpy(host, ptr_, bytes_, cudaMemcpyDeviceToHost));
}

}  // namespace dlc::cuda
