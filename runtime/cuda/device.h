// CUDA devices and device memory for the CUDA backend and its tests: how many GPUs are usable,
// and an owning device buffer with host copies.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace dlc::cuda {

/// The number of usable CUDA devices: 0 where there is no driver or no GPU. Throws dlc::Error only
/// when a driver is there but older than the CUDA runtime dlc was built with.
int cuda_device_count();

/// "NAME (sm_XY, N GiB)" of device `ordinal`.
std::string device_description(int ordinal);

/// An owning device allocation (cudaMalloc) on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

  /// Synchronous copies of `bytes()` bytes (host data must hold that many).
  void upload(const void* host);
  void download(void* host) const;
  /// A buffer holding a copy of `v`.
  template <typename T>
  static DeviceBuffer from(const std::vector<T>& v) {
    DeviceBuffer b(v.size() * sizeof(T));
    b.upload(v.data());
    return b;
  }
  template <typename T>
  std::vector<T> to_vector() const {
    std::vector<T> v(bytes_ / sizeof(T));
    download(v.data());
    return v;
  }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace dlc::cuda
