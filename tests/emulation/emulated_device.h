// A host stand-in for a GPU, so that the GPU tests also run where no GPU is: HostBuffer for a
// device buffer, and EmulatedKernel, an emitted KernelSource built as host C++ against
// cuda_shim.h with the compiler that built the tests (cached on disk by source) and run entry by
// entry. tests/unit/cuda_test_util.h takes them as its device
// when built with DLC_EMULATED_DEVICE (dlc_emulated_gpu_tests), and emulated_session.h runs
// whole CUDA plans on them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "tests/unit/kernel_args.h"

namespace dlc::emulation {

/// Host memory with the part of runtime/cuda/device.h's DeviceBuffer interface the kernel tests
/// use. New buffers hold 0xff bytes (NaN floats), so a result a kernel leaves unwritten shows.
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(size_t bytes) : bytes_(bytes, 0xff) {}
  HostBuffer(HostBuffer&&) noexcept = default;
  HostBuffer& operator=(HostBuffer&&) noexcept = default;
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* get() const { return bytes_.empty() ? nullptr : const_cast<unsigned char*>(bytes_.data()); }
  size_t bytes() const { return bytes_.size(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(get());
  }
  void upload(const void* host);
  void download(void* host) const;
  template <typename T>
  static HostBuffer from(const std::vector<T>& v) {
    HostBuffer b;
    const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
    b.bytes_.assign(bytes, bytes + v.size() * sizeof(T));
    return b;
  }

 private:
  std::vector<unsigned char> bytes_;
};

/// A kernel source built for the host. Throws dlc::Error with the compiler's output where it does
/// not compile as host C++.
class EmulatedKernel {
 public:
  explicit EmulatedKernel(const codegen::cuda::KernelSource& source);

  /// Builds those of `sources` not built yet in one compiler run (the kernels of a plan: a
  /// compiler run costs about 0.3 s before its first kernel).
  static void build_all(const std::vector<const codegen::cuda::KernelSource*>& sources);

  /// Runs entry `entry` on a `grid` of blocks of `block` threads with `shared_bytes` of dynamic
  /// shared memory; `args` in the entry's parameter order.
  void launch(size_t entry, const int64_t (&grid)[3], const int (&block)[3], int shared_bytes,
              std::vector<cuda::test::Arg>& args) const;

 private:
  void (*run_)(int entry, const long long* grid, const int* block, int shared_bytes, void** args) = nullptr;
  size_t entries_ = 0;
};

}  // namespace dlc::emulation

namespace dlc::cuda::test {

/// The kernel tests' device, emulated: always one, with host buffers.
using DeviceBuffer = emulation::HostBuffer;
inline int cuda_device_count() { return 1; }

/// As the GPU's run_kernels (cuda_test_util.h): `ks`'s entries in order, arguments bound by
/// parameter name, "workspace" and "workspace+N" in a workspace of 0xff bytes, `grid0` the grid of
/// entries that leave it 0.
void run_kernels(const codegen::cuda::KernelSource& ks, const Args& args, int64_t grid0 = 1);

}  // namespace dlc::cuda::test
