// An owned handle of the CUDA runtime or one of its libraries (a stream, an event, a cuDNN
// descriptor, a cuBLASLt layout, pinned host memory): released by `Release` when set, also when
// the constructor that made it throws half way. Movable, not copyable.
#pragma once

#include <utility>

namespace dlc::cuda {

template <typename T, auto Release>
class OwnedHandle {
 public:
  OwnedHandle() = default;
  explicit OwnedHandle(T handle) : handle_(handle) {}
  ~OwnedHandle() {
    if (handle_) Release(handle_);
  }
  OwnedHandle(OwnedHandle&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  OwnedHandle& operator=(OwnedHandle&& o) noexcept {
    std::swap(handle_, o.handle_);
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;

  /// Where a create call writes the handle; only on an empty one.
  T* out() { return &handle_; }
  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  T handle_ = nullptr;
};

}  // namespace dlc::cuda
