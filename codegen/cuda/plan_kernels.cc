// Binding a plan's CUDA stages and storing their kernels once each.
#include "codegen/cuda/plan_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <thread>

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

// Compiles every source on up to `jobs` threads (0: one per core). Each result lands in its own
// slot, so the plan does not depend on which compile ends first; a failure rethrows the error
// of the first failing source in order, whatever the timing.
std::vector<CompiledKernel> compile_all(const std::vector<KernelSource>& sources,
                                        const KernelCompiler& compile, int jobs) {
  std::vector<CompiledKernel> compiled(sources.size());
  std::vector<std::exception_ptr> errors(sources.size());
  std::atomic<size_t> next{0};
  const auto work = [&] {
    for (size_t i = next++; i < sources.size(); i = next++) {
      try {
        compiled[i] = compile(sources[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min(sources.size(), jobs > 0 ? size_t(jobs) : cores);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return compiled;
}

void to_proto(const OperandRef& r, plan::CudaOperand* out) {
  switch (r.kind) {
    case OperandRef::Kind::Input:
      out->set_kind(plan::CudaOperand::INPUT);
      break;
    case OperandRef::Kind::Output:
      out->set_kind(plan::CudaOperand::OUTPUT);
      break;
    case OperandRef::Kind::None:
      out->set_kind(plan::CudaOperand::NONE);
      break;
  }
  out->set_index(r.index);
}

// A binding's operand references: kernel arguments, a multi-tensor table, copies made first.
void operands_to_proto(const StepBinding& b, plan::CudaStep* out) {
  for (const auto& [param, operand] : b.args) {
    plan::CudaArg* a = out->add_args();
    a->set_param(param);
    to_proto(operand, a->mutable_operand());
  }
  for (const auto& row : b.table) {
    plan::CudaTableRow* r = out->add_table();
    for (const OperandRef& slot : row) to_proto(slot, r->add_slots());
  }
  for (const auto& [input, output] : b.copies) {
    plan::CudaCopy* c = out->add_copies();
    c->set_input(input);
    c->set_output(output);
  }
}

// Adds the kernel compiled from `source` to the plan.
void add_kernel(plan::Plan& plan, const KernelSource& source, const CompiledKernel& compiled,
                const std::string& arch) {
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
}

}  // namespace

CudaBindStats bind_cuda_plan(plan::Plan& plan, const std::string& arch, const KernelCompiler& compile,
                             int jobs, HostFallback fallback) {
  CudaBindStats stats;
  // Distinct sources in the order of their first step; a kernel's index in the plan is its place
  // here after the kernels the plan already has.
  std::vector<KernelSource> sources;
  std::map<std::string, int32_t> kernel_of_source;  // exact source text (entry names are in it)
  const int32_t first_kernel = plan.cuda_kernels_size();
  for (int s = 0; s < plan.stages_size(); ++s) {
    if (!plan::is_cuda_device(plan.stages(s).device())) continue;
    for (int i = 0; i < plan.stages(s).steps_size(); ++i) {
      plan::CudaStep* out = plan.mutable_stages(s)->mutable_steps(i)->mutable_cuda();
      StepBinding b;
      try {
        b = bind_cuda_step(plan, plan.stages(s), i);
      } catch (const NoCudaPathError& e) {
        if (fallback == HostFallback::Refuse) throw;
        b = host_kernel_binding();
        out->set_host_reason(e.why);
        ++stats.host_kernel_steps;
      }
      operands_to_proto(b, out);
      switch (b.kind) {
        case StepBinding::Kind::Kernel: {
          auto [it, fresh] =
              kernel_of_source.try_emplace(b.kernel->source, first_kernel + int32_t(sources.size()));
          if (fresh) sources.push_back(*b.kernel);
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
          if (b.call != plan::kHostKernelCall) ++stats.host_steps;
          break;
      }
    }
  }
  const std::vector<CompiledKernel> compiled = compile_all(sources, compile, jobs);
  for (size_t k = 0; k < sources.size(); ++k) add_kernel(plan, sources[k], compiled[k], arch);
  stats.kernels = plan.cuda_kernels_size();
  return stats;
}

}  // namespace dlc::codegen::cuda
