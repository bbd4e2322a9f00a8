// The CUDA session's device allocation and its fit check (device_memory.h).
#include "runtime/cuda/device_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/kernel_source.h"
#include "codegen/cuda/multi_tensor.h"
#include "dlc/error.h"
#include "runtime/plan/plan_values.h"

namespace dlc::cuda {

namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20)); }

}  // namespace

std::string DeviceMemoryLayout::describe() const {
  return fmt::format("arena {} (planned peak {}), workspace {}, tables {}, input staging {}: total {}",
                     mib(arena_bytes), mib(peak_bytes), mib(workspace_bytes), mib(table_bytes),
                     mib(staging_bytes), mib(total_bytes));
}

DeviceMemoryLayout device_memory_layout(const plan::Plan& plan, const plan::Stage& stage,
                                        int64_t library_workspace_bytes) {
  DeviceMemoryLayout m;
  m.workspace_bytes = library_workspace_bytes;
  m.arena_bytes = stage.arena_bytes();
  m.peak_bytes = stage.peak_bytes();
  for (const plan::Step& step : stage.steps()) {
    const plan::CudaStep& c = step.cuda();
    if (c.kind() == plan::CudaStep::KERNEL)
      m.workspace_bytes = std::max(m.workspace_bytes, plan.cuda_kernels(c.kernel()).workspace_bytes());
    m.table_bytes +=
        codegen::cuda::align256(c.table_size() * int64_t(sizeof(codegen::cuda::MultiTensorEntry)));
  }
  for (const auto* bindings : {&plan.inputs(), &plan.labels()})
    for (const plan::Binding& b : *bindings)
      m.staging_bytes +=
          codegen::cuda::align256(int64_t(plan::buffer_type(stage.buffers(b.buffer())).bytes()));
  m.workspace_offset = codegen::cuda::align256(m.arena_bytes);
  m.table_offset = m.workspace_offset + codegen::cuda::align256(m.workspace_bytes);
  m.staging_offset = m.table_offset + m.table_bytes;
  m.total_bytes = m.staging_offset + m.staging_bytes;
  return m;
}

void check_device_fits(const DeviceMemoryLayout& layout, int64_t free_bytes, int64_t total_bytes,
                       const std::string& device) {
  if (layout.total_bytes <= free_bytes) return;
  throw Error(fmt::format(
      "the plan does not fit on {}: it needs {} ({}), and {} of {} are free; a plan needs less with "
      "--precision bf16 or fp16 (16-bit activations) or a smaller --batch (with --accumulate K to keep "
      "the batch an optimizer step sees)",
      device, mib(layout.total_bytes), layout.describe(), mib(free_bytes), mib(total_bytes)));
}

}  // namespace dlc::cuda
