// Name -> function lookup over cpu/kernels.def.
#include <string_view>
#include <utility>

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

namespace {
const std::pair<std::string_view, KernelFn> kKernels[] = {
#define DLC_CPU_KERNEL(name) {#name, &kernel_##name},
#include "runtime/cpu/kernels.def"
#undef DLC_CPU_KERNEL
};
}  // namespace

KernelFn find_kernel(std::string_view name) {
  for (const auto& [n, fn] : kKernels)
    if (n == name) return fn;
  return nullptr;
}

}  // namespace dlc::cpu
