// The CPU kernel interface: a kernel reads its input views and attributes and writes its
// (preallocated) outputs. Kernels are listed in cpu/kernels.def and written per op family in
// cpu/kernels/<family>.cc. A kernel gets its context const: the CPU session builds each step's
// once and passes the same one to every run (what a kernel keeps between runs goes in `state`).
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "dlc/attributes.h"
#include "dlc/error.h"
#include "dlc/tensor.h"

namespace dlc::cpu {

struct TensorView {
  DType dtype = DType::F32;
  Shape dims;
  void* data = nullptr;  // null: absent optional input/output

  int64_t numel() const { return num_elements(dims); }
  int64_t rank() const { return int64_t(dims.size()); }
  size_t bytes() const { return size_t(numel()) * dtype_size(dtype); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data);
  }
};

/// Per-step cache a kernel may keep between runs (e.g. a oneDNN primitive).
struct KernelState {
  virtual ~KernelState() = default;
};

struct KernelContext {
  const Attrs& attrs;
  std::vector<TensorView> inputs;
  std::vector<TensorView> outputs;
  std::unique_ptr<KernelState>* state = nullptr;  // may be null (one-off evaluation)
  std::string step_name;
  std::string kernel_name;

  bool has_input(int i) const { return i < int(inputs.size()) && inputs[i].data; }
  bool has_output(int i) const { return i < int(outputs.size()) && outputs[i].data; }

  /// Throws dlc::Error "step 'NAME' (Kernel): message".
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error(fmt::format("step '{}' ({}): {}", step_name, kernel_name,
                            fmt::format(f, std::forward<Args>(args)...)));
  }
};

using KernelFn = void (*)(const KernelContext&);

/// The kernel registered under `name`, or nullptr.
KernelFn find_kernel(std::string_view name);

#define DLC_CPU_KERNEL(name) void kernel_##name(const KernelContext& ctx);
#include "runtime/cpu/kernels.def"
#undef DLC_CPU_KERNEL

}  // namespace dlc::cpu
