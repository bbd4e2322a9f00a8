// Binding a plan's CUDA stages and storing their kernels once each.
#include "codegen/cuda/plan_kernels.h"

#include <fmt/format.h>

#include <map>

#include "codegen/cuda/step_binding.h"
#include "dlc/error.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_values.h"

namespace dlc::codegen::cuda {

namespace {

void to_proto(const LaunchConfig& l, plan::CudaLaunch* out) {
  for (int64_t g : l.grid) out->add_grid(g);
  for (int b : l.block) out->add_block(b);
  out->set_shared_bytes(l.shared_bytes);
}

// Adds the kernel compiled from `source` to the plan and returns its index.
int32_t add_kernel(plan::Plan& plan, const KernelSource& source, const std::string& arch,
                   const KernelCompiler& compile) {
  const CompiledKernel compiled = compile(source);
  if (compiled.lowered_names.size() != source.entries.size())
    throw Error(fmt::format("{}: the compiler returned {} kernel symbols for {} entries", source.name,
                            compiled.lowered_names.size(), source.entries.size()));
  plan::CudaKernel* k = plan.add_cuda_kernels();
  k->set_name(source.name);
  k->set_kind(source.kind);
  k->set_source_hash(compiled.key);
  k->set_arch(arch);
  k->set_cubin(compiled.cubin);
  k->set_ptx(compiled.ptx);
  k->set_workspace_bytes(source.workspace_bytes);
  for (size_t i = 0; i < source.entries.size(); ++i) {
    plan::CudaKernelEntry* e = k->add_entries();
    e->set_name(source.entries[i].name);
    e->set_lowered_name(compiled.lowered_names[i]);
    for (const std::string& p : source.entries[i].params) e->add_params(p);
  }
  return int32_t(plan.cuda_kernels_size() - 1);
}

}  // namespace

CudaBindStats bind_cuda_plan(plan::Plan& plan, const std::string& arch, const KernelCompiler& compile) {
  CudaBindStats stats;
  std::map<std::string, int32_t> kernel_of_source;  // exact source text (entry names are in it)
  for (int s = 0; s < plan.stages_size(); ++s) {
    if (!plan::is_cuda_device(plan.stages(s).device())) continue;
    for (int i = 0; i < plan.stages(s).steps_size(); ++i) {
      const StepBinding b = bind_cuda_step(plan, plan.stages(s), i);
      plan::CudaStep* out = plan.mutable_stages(s)->mutable_steps(i)->mutable_cuda();
      switch (b.kind) {
        case StepBinding::Kind::Kernel: {
          auto [it, fresh] = kernel_of_source.try_emplace(b.kernel->source, -1);
          if (fresh) it->second = add_kernel(plan, *b.kernel, arch, compile);
          out->set_kind(plan::CudaStep::KERNEL);
          out->set_kernel(it->second);
          for (const LaunchConfig& l : b.launches) to_proto(l, out->add_launches());
          ++stats.kernel_steps;
          break;
        }
        case StepBinding::Kind::Library:
          out->set_kind(plan::CudaStep::LIBRARY);
          out->set_call(b.call);
          plan::to_proto(b.params, out->mutable_params());
          ++stats.library_calls;
          break;
        case StepBinding::Kind::Host:
          out->set_kind(plan::CudaStep::HOST);
          out->set_call(b.call);
          ++stats.host_steps;
          break;
      }
    }
  }
  stats.kernels = plan.cuda_kernels_size();
  return stats;
}

}  // namespace dlc::codegen::cuda
