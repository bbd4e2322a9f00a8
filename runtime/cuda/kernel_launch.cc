// Resolving a generated-kernel step's arguments (kernel_launch.h).
#include "runtime/cuda/kernel_launch.h"

#include <fmt/format.h>

#include <map>

#include "dlc/error.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_values.h"

namespace dlc::cuda {

std::vector<void*> KernelLaunch::arg_addresses() {
  std::vector<void*> addresses;
  for (KernelArg& a : args) addresses.push_back(std::visit([](auto& v) -> void* { return &v; }, a));
  return addresses;
}

void* buffer_address(const plan::Stage& stage, int32_t buffer, uint8_t* arena) {
  return buffer < 0 ? nullptr : arena + stage.buffers(buffer).offset();
}

void* operand_address(const plan::Stage& stage, const plan::Step& step, const plan::CudaOperand& operand,
                      uint8_t* arena) {
  return buffer_address(stage, plan::operand_buffer(step, operand), arena);
}

KernelStep prepare_kernel_step(const plan::Plan& plan, const plan::Stage& stage, const plan::Step& step,
                               const DeviceRegions& regions, void* table) {
  const plan::CudaStep& c = step.cuda();
  KernelStep ks;
  ks.kernel = c.kernel();
  for (const plan::CudaTableRow& row : c.table()) {
    codegen::cuda::MultiTensorEntry e;
    for (int slot = 0; slot < 4; ++slot)
      e.ptr[slot] = operand_address(stage, step, row.slots(slot), regions.arena);
    e.n = plan::buffer_type(stage.buffers(plan::operand_buffer(step, row.slots(0)))).numel();
    ks.table_rows.push_back(e);
  }
  const long long chunks = codegen::cuda::assign_chunks(ks.table_rows);

  std::map<std::string, void*> operands;
  for (const plan::CudaArg& a : c.args())
    operands[a.param()] = operand_address(stage, step, a.operand(), regions.arena);
  const plan::CudaKernel& kernel = plan.cuda_kernels(c.kernel());
  for (int i = 0; i < kernel.entries_size(); ++i) {
    const plan::CudaKernelEntry& e = kernel.entries(i);
    const plan::CudaLaunch& l = c.launches(i);
    KernelLaunch launch;
    launch.entry = e.name();
    for (int d = 0; d < 3; ++d) {
      launch.grid[d] = l.grid(d);
      launch.block[d] = l.block(d);
    }
    launch.shared_bytes = l.shared_bytes();
    for (const std::string& param : e.params()) {
      if (param == "workspace" || param.rfind("workspace+", 0) == 0) {
        const int64_t offset = param == "workspace" ? 0 : std::stoll(param.substr(10));
        if (offset < 0 || offset >= std::max<int64_t>(kernel.workspace_bytes(), 1) ||
            kernel.workspace_bytes() > regions.workspace_bytes)
          throw Error(fmt::format("step '{}': kernel parameter '{}' lies outside the {}-byte workspace",
                                  step.name(), param, kernel.workspace_bytes()));
        launch.args.emplace_back(static_cast<void*>(regions.workspace + offset));
      } else if (param == "table") {
        launch.args.emplace_back(table);
      } else if (param == "num_tensors") {
        launch.args.emplace_back(int(ks.table_rows.size()));
      } else if (param == "num_chunks") {
        launch.args.emplace_back(chunks);
      } else {
        const auto it = operands.find(param);
        if (it == operands.end())
          throw Error(
              fmt::format("step '{}': kernel parameter '{}' is bound to no operand", step.name(), param));
        launch.args.emplace_back(it->second);
      }
    }
    ks.launches.push_back(std::move(launch));
  }
  return ks;
}

}  // namespace dlc::cuda
