// Helpers of the CPU kernel unit tests: views over test-owned buffers, a kernel context without a
// state slot, and reproducible random values.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace dlc::cpu::test {

inline TensorView view(DType dtype, Shape dims, void* data) {
  return TensorView{dtype, std::move(dims), data};
}

/// An f32 view of `data`.
inline TensorView view(std::vector<float>& data, Shape dims) {
  return view(DType::F32, std::move(dims), data.data());
}

/// A one-off context (no state slot) for `kernel`; errors name the step "test".
inline KernelContext kernel_context(const Attrs& attrs, std::vector<TensorView> inputs,
                                    std::vector<TensorView> outputs, std::string kernel = "kernel") {
  return KernelContext{attrs, std::move(inputs), std::move(outputs), nullptr, "test", std::move(kernel)};
}

/// n values uniform in [-1, 1) from `seed`.
inline std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace dlc::cpu::test
