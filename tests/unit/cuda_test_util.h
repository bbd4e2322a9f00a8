// Helpers of the GPU kernel tests: host tensors in any storage dtype, device copies, running an
// emitted KernelSource with arguments bound by parameter name, running a CPU reference kernel,
// and comparing with a tolerance per storage dtype. Built with DLC_EMULATED_DEVICE, the device
// is the host (tests/emulation/emulated_device.h) and the kernels run emulated.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/kernel_source.h"
#include "dlc/attributes.h"
#include "dlc/error.h"
#include "dlc/tensor.h"
#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_args.h"
#ifdef DLC_EMULATED_DEVICE
#include "tests/emulation/emulated_device.h"
#else
#include "runtime/cuda/check.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/module.h"
#endif

namespace dlc::cuda::test {

using codegen::cuda::KernelEntry;
using codegen::cuda::KernelSource;

/// n values uniform in [lo, hi) from `seed`.
inline std::vector<double> random_values(int64_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(size_t(n), 0.0);
  for (double& x : v) x = dist(rng);
  return v;
}

/// A tensor of `dtype` holding `values` (rounded to the dtype).
inline Tensor make(DType dtype, const Shape& dims, const std::vector<double>& values) {
  return Tensor::from_double(dtype, values, dims);
}

/// `t` converted to f32 (values rounded to t's dtype already stay exact).
inline Tensor to_f32(const Tensor& t) { return Tensor::from_double(DType::F32, t.as_double(), t.type.shape); }

inline DeviceBuffer upload(const Tensor& t) {
  DeviceBuffer b(t.bytes.size());
  b.upload(t.bytes.data());
  return b;
}

/// A host tensor of `type` with the contents of `b`.
inline Tensor download(const DeviceBuffer& b, const TensorType& type) {
  Tensor t(type);
  if (t.bytes.size() != b.bytes()) throw Error("download: size mismatch");
  b.download(t.bytes.data());
  return t;
}

#ifndef DLC_EMULATED_DEVICE
/// Compiles `ks` (NVRTC cache), then launches its entries in order on the default stream with
/// arguments bound by parameter name; "workspace" and "workspace+N" (N bytes in) come from a
/// workspace filled with 0xff bytes (NaN floats), so a kernel relying on zeroed scratch fails.
/// `grid0` is the grid of entries whose launch leaves it 0 (multi-tensor kernels).
inline void run_kernels(const KernelSource& ks, const Args& args, int64_t grid0 = 1) {
  const auto program = nvrtc_cache().compile(ks.name, ks.source, ks.kernel_names());
  const CudaModule module(*program);
  DeviceBuffer workspace(size_t(std::max<int64_t>(ks.workspace_bytes, 256)));
  DLC_CUDA_CHECK(cudaMemset(workspace.get(), 0xff, workspace.bytes()));
  for (const KernelEntry& e : ks.entries) {
    std::vector<Arg> values = entry_args(e, args, workspace.get());
    std::vector<void*> pointers;
    for (Arg& a : values) pointers.push_back(std::visit([](auto& x) -> void* { return &x; }, a));
    const dim3 grid(unsigned(e.launch.grid[0] ? e.launch.grid[0] : grid0), unsigned(e.launch.grid[1]),
                    unsigned(e.launch.grid[2]));
    const dim3 block(unsigned(e.launch.block[0]), unsigned(e.launch.block[1]), unsigned(e.launch.block[2]));
    module.launch(e.name, grid, block, size_t(e.launch.shared_bytes), nullptr, pointers.data());
    DLC_CUDA_CHECK(cudaGetLastError());
  }
  DLC_CUDA_CHECK(cudaDeviceSynchronize());
}
#endif

/// Runs the CPU kernel `name` (the reference) on host tensors; null inputs are absent.
inline void run_cpu(const std::string& name, const Attrs& attrs, const std::vector<Tensor*>& inputs,
                    const std::vector<Tensor*>& outputs) {
  const cpu::KernelFn fn = cpu::find_kernel(name);
  if (!fn) throw Error("no CPU kernel " + name);
  auto view = [](Tensor* t) {
    return t ? cpu::TensorView{t->type.dtype, t->type.shape, t->bytes.data()} : cpu::TensorView{};
  };
  cpu::KernelContext ctx{attrs, {}, {}, nullptr, "reference", name};
  for (Tensor* t : inputs) ctx.inputs.push_back(view(t));
  for (Tensor* t : outputs) ctx.outputs.push_back(view(t));
  fn(ctx);
}

/// Relative tolerance for results stored as `dtype` (the arithmetic is f32 everywhere).
inline double tolerance(DType dtype) {
  switch (dtype) {
    case DType::F16:
      return 1e-2;
    case DType::BF16:
      return 4e-2;
    default:
      return 1e-4;
  }
}

/// Every element of `got` within tolerance(dtype) · max(1, |want|) of `want`; NaN matches NaN.
inline void expect_close(const Tensor& got, const Tensor& want, DType dtype, const std::string& what) {
  const std::vector<double> g = got.as_double(), w = want.as_double();
  ASSERT_EQ(g.size(), w.size()) << what;
  const double tol = tolerance(dtype);
  int reported = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool ok = (std::isnan(g[i]) && std::isnan(w[i])) ||
                    std::fabs(g[i] - w[i]) <= tol * std::max(1.0, std::fabs(w[i]));
    if (!ok && reported++ < 5) ADD_FAILURE() << what << "[" << i << "]: GPU " << g[i] << ", CPU " << w[i];
  }
}

}  // namespace dlc::cuda::test
