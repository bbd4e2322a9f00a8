// NVRTC as the kernel compiler of CUDA plans.
#include "tools/driver/cuda_plan.h"

#include <fmt/format.h>

#include <regex>

#include "dlc/error.h"
#include "runtime/plan/cuda_steps.h"
#ifdef DLC_HAVE_CUDA
#include "runtime/cuda/nvrtc_compiler.h"
#endif

namespace dlc::driver {

std::string plan_device(const std::string& device) {
  if (device == "cpu") return device;
  if (device == "cuda") return "cuda:0";
  if (std::regex_match(device, std::regex("cuda:[0-9]+"))) return device;
  throw Error(fmt::format("--device '{}': expected cpu, cuda or cuda:N", device));
}

void check_arch(const std::string& arch) {
  if (!std::regex_match(arch, std::regex("sm_[0-9]{2,3}[af]?")))
    throw Error(fmt::format("--arch '{}': expected a real GPU architecture such as sm_90", arch));
}

codegen::cuda::CudaBindStats finish_device_plan(plan::Plan& plan, const std::string& arch,
                                                bool host_fallback) {
  bool cuda = false;
  for (plan::Stage& st : *plan.mutable_stages()) {
    st.set_device(plan_device(st.device()));
    cuda = cuda || plan::is_cuda_device(st.device());
  }
  if (!cuda) return {};
  check_arch(arch);
#ifdef DLC_HAVE_CUDA
  cuda::NvrtcOptions options;
  options.arch = arch;
  options.want_ptx = true;  // same compilation: JIT on GPUs of other architectures
  const auto compile = [&](const codegen::cuda::KernelSource& source) {
    const std::vector<std::string> names = source.kernel_names();
    const auto program = cuda::nvrtc_cache().compile(source.name, source.source, names, options);
    return codegen::cuda::CompiledKernel{cuda::NvrtcCache::key(source.source, names, options), program->cubin,
                                         program->ptx, program->lowered_names};
  };
  return codegen::cuda::bind_cuda_plan(
      plan, arch, compile, 0,
      host_fallback ? codegen::cuda::HostFallback::CpuKernel : codegen::cuda::HostFallback::Refuse);
#else
  (void)host_fallback;
  throw Error("--device cuda: this dlc was built without the CUDA Toolkit (NVRTC compiles the kernels)");
#endif
}

std::string host_kernel_notes(const plan::Plan& plan, int limit) {
  std::string notes;
  int count = 0;
  for (const plan::Stage& st : plan.stages())
    for (const plan::Step& s : st.steps())
      if (plan::is_host_kernel_step(s) && count++ < limit)
        notes += fmt::format("note: step '{}' (op {}) runs on the host by its CPU kernel: {}\n", s.name(),
                             s.kernel(), s.cuda().host_reason());
  if (count > limit) notes += fmt::format("note: … and {} more steps on the host\n", count - limit);
  if (count > 0)
    notes +=
        "note: each host step copies its operands from the device and back every run "
        "(--no-host-fallback makes them errors)\n";
  return notes;
}

}  // namespace dlc::driver
