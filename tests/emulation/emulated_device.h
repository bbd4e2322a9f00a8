// A host stand-in for the GPU of the kernel tests (tests/unit/cuda_test_util.h), so that
// tests/unit/cuda_kernels_test.cc also builds as dlc_emulated_kernel_tests and runs every
// emitted kernel emulated (cuda_shim.h) where no GPU is: DeviceBuffer is host memory, the one
// "device" always exists, and run_kernels compiles the KernelSource as host C++ with the C++
// compiler that built the tests (a shared object per distinct source, cached on disk), loads it
// and runs its entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "tests/unit/kernel_args.h"

namespace dlc::cuda {

/// Host memory in place of runtime/cuda/device.h's buffer, with the part of its interface the
/// kernel tests use. New buffers hold 0xff bytes (NaN floats), so a result a kernel leaves
/// unwritten shows.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes, 0xff) {}
  DeviceBuffer(DeviceBuffer&&) noexcept = default;
  DeviceBuffer& operator=(DeviceBuffer&&) noexcept = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return bytes_.empty() ? nullptr : const_cast<unsigned char*>(bytes_.data()); }
  size_t bytes() const { return bytes_.size(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(get());
  }
  void upload(const void* host);
  void download(void* host) const;
  template <typename T>
  static DeviceBuffer from(const std::vector<T>& v) {
    DeviceBuffer b;
    const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
    b.bytes_.assign(bytes, bytes + v.size() * sizeof(T));
    return b;
  }

 private:
  std::vector<unsigned char> bytes_;
};

/// The emulated device: always one.
inline int cuda_device_count() { return 1; }

namespace test {

/// As the GPU's run_kernels (cuda_test_util.h): `ks`'s entries in order, arguments bound by
/// parameter name, "workspace" and "workspace+N" in a workspace of 0xff bytes, `grid0` the grid of
/// entries that leave it 0. Throws dlc::Error with the compiler's output where `ks` does not
/// compile as host C++.
void run_kernels(const codegen::cuda::KernelSource& ks, const Args& args, int64_t grid0 = 1);

}  // namespace test
}  // namespace dlc::cuda
