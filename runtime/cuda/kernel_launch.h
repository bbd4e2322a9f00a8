// A plan's generated-kernel step made ready to launch: each entry's argument values resolved
// once to device addresses (the arena's buffers, the shared workspace, the step's multi-tensor
// table) and by-value integers, in the entry's parameter order. Pure address arithmetic, so it is
// tested without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "codegen/cuda/multi_tensor.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::cuda {

/// Where a session's regions start on the device.
struct DeviceRegions {
  uint8_t* arena = nullptr;
  uint8_t* workspace = nullptr;
  int64_t workspace_bytes = 0;
};

/// A kernel argument passed by value: a device pointer or an integer.
using KernelArg = std::variant<void*, int, long long>;

struct KernelLaunch {
  std::string entry;  // the extern "C" name (CudaModule::launch)
  int64_t grid[3] = {1, 1, 1};
  int block[3] = {1, 1, 1};
  int shared_bytes = 0;
  std::vector<KernelArg> args;  // in parameter order

  /// The addresses of the argument values, as cudaLaunchKernel takes them (valid while `args` is).
  std::vector<void*> arg_addresses();
};

struct KernelStep {
  int kernel = -1;  // index into Plan.cuda_kernels
  std::vector<KernelLaunch> launches;
  /// The multi-tensor table the session uploads to `table` before the first run (empty without).
  std::vector<codegen::cuda::MultiTensorEntry> table_rows;
};

/// The device address of buffer `buffer` of `stage` in `arena` (null for -1, an absent operand).
void* buffer_address(const plan::Stage& stage, int32_t buffer, uint8_t* arena);

/// The device address of a step operand (null for CudaOperand::NONE).
void* operand_address(const plan::Stage& stage, const plan::Step& step, const plan::CudaOperand& operand,
                      uint8_t* arena);

/// Resolves `step` (a KERNEL step of `stage`) against `regions`; `table` is where its
/// multi-tensor table will live. Throws dlc::Error naming the step for a workspace offset past the
/// workspace or a parameter bound to nothing.
KernelStep prepare_kernel_step(const plan::Plan& plan, const plan::Stage& stage, const plan::Step& step,
                               const DeviceRegions& regions, void* table);

}  // namespace dlc::cuda
