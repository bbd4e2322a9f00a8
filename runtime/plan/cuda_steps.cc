// Checks and counts of a plan's CUDA bindings.
#include "runtime/plan/cuda_steps.h"

#include <fmt/format.h>

#include <set>

#include "dlc/error.h"

namespace dlc::plan {

namespace {

void validate_launch(const CudaLaunch& l, const std::string& where) {
  if (l.grid_size() != 3 || l.block_size() != 3)
    throw Error(fmt::format("{} has a launch without 3 grid and 3 block sizes", where));
  for (int64_t g : l.grid())
    if (g < 1 || g > (int64_t(1) << 31) - 1)
      throw Error(fmt::format("{} has an invalid grid size {}", where, g));
  int64_t threads = 1;
  for (int32_t b : l.block()) {
    if (b < 1 || b > 1024) throw Error(fmt::format("{} has an invalid block size {}", where, b));
    threads *= b;
  }
  if (threads > 1024)
    throw Error(fmt::format("{} launches {} threads a block (at most 1024)", where, threads));
  if (l.shared_bytes() < 0) throw Error(fmt::format("{} has negative shared memory", where));
}

void validate_operand(const CudaOperand& o, const Step& step, const std::string& where) {
  if (o.kind() != CudaOperand::NONE && operand_buffer(step, o) < 0)
    throw Error(fmt::format("{} refers to {} {}, which it lacks", where,
                            o.kind() == CudaOperand::INPUT ? "input" : "output", o.index()));
}

// Every kernel parameter bound once (by the runtime or to an operand in range), and a table
// exactly where the kernel reads one.
void validate_kernel_operands(const CudaStep& c, const CudaKernel& kernel, const Step& step,
                              const std::string& where) {
  std::set<std::string> bound;
  for (const CudaArg& a : c.args()) {
    if (!bound.insert(a.param()).second)
      throw Error(fmt::format("{} binds kernel parameter '{}' twice", where, a.param()));
    validate_operand(a.operand(), step, where);
  }
  bool reads_table = false;
  for (const CudaKernelEntry& e : kernel.entries())
    for (const std::string& param : e.params()) {
      reads_table = reads_table || param == "table";
      if (!is_runtime_kernel_param(param) && !bound.count(param))
        throw Error(
            fmt::format("{}: parameter '{}' of kernel {} is bound to no operand", where, param, e.name()));
    }
  if (reads_table != (c.table_size() > 0))
    throw Error(fmt::format("{} has {} multi-tensor table rows for a kernel that {} one", where,
                            c.table_size(), reads_table ? "reads" : "reads no"));
  for (const CudaTableRow& row : c.table()) {
    if (row.slots_size() != 4 || row.slots(0).kind() == CudaOperand::NONE)
      throw Error(
          fmt::format("{} has a multi-tensor table row without 4 slots and a tensor in the first", where));
    for (const CudaOperand& o : row.slots()) validate_operand(o, step, where);
  }
}

void validate_cuda_step(const Plan& plan, const Step& step, const std::string& where) {
  const CudaStep& c = step.cuda();
  for (const CudaCopy& copy : c.copies())
    if (copy.input() < 0 || copy.input() >= step.inputs_size() || step.inputs(copy.input()) < 0 ||
        copy.output() < 0 || copy.output() >= step.outputs_size() || step.outputs(copy.output()) < 0)
      throw Error(
          fmt::format("{} copies input {} to output {}, which it lacks", where, copy.input(), copy.output()));
  switch (c.kind()) {
    case CudaStep::KERNEL: {
      if (c.kernel() < 0 || c.kernel() >= plan.cuda_kernels_size())
        throw Error(fmt::format("{} uses CUDA kernel {} of {}", where, c.kernel(), plan.cuda_kernels_size()));
      const int entries = plan.cuda_kernels(c.kernel()).entries_size();
      if (c.launches_size() != entries)
        throw Error(fmt::format("{} has {} launches for the {} entries of its kernel", where,
                                c.launches_size(), entries));
      for (const CudaLaunch& l : c.launches()) validate_launch(l, where);
      validate_kernel_operands(c, plan.cuda_kernels(c.kernel()), step, where);
      return;
    }
    case CudaStep::LIBRARY:
      if (c.call().empty()) throw Error(fmt::format("{} is a library call without a name", where));
      return;
    case CudaStep::HOST:
      if (c.call() != "alias" && c.call() != "copy" && c.call() != kHostKernelCall)
        throw Error(fmt::format("{} has an unknown host call '{}'", where, c.call()));
      return;
    default:
      throw Error(fmt::format("{} is not bound to a CUDA kernel, library call or host step", where));
  }
}

}  // namespace

int32_t operand_buffer(const Step& step, const CudaOperand& operand) {
  if (operand.kind() == CudaOperand::NONE) return -1;
  const auto& buffers = operand.kind() == CudaOperand::INPUT ? step.inputs() : step.outputs();
  return operand.index() >= 0 && operand.index() < buffers.size() ? buffers[operand.index()] : -1;
}

bool is_runtime_kernel_param(const std::string& param) {
  return param == "workspace" || param.rfind("workspace+", 0) == 0 || param == "table" ||
         param == "num_tensors" || param == "num_chunks";
}

bool is_host_kernel_step(const Step& step) {
  return step.cuda().kind() == CudaStep::HOST && step.cuda().call() == kHostKernelCall;
}

bool is_cuda_device(const std::string& device) { return device == "cuda" || device.rfind("cuda:", 0) == 0; }

bool has_cuda_stage(const Plan& plan) {
  for (const Stage& st : plan.stages())
    if (is_cuda_device(st.device())) return true;
  return false;
}

void validate_cuda_steps(const Plan& plan, const std::string& what) {
  for (int k = 0; k < plan.cuda_kernels_size(); ++k) {
    const CudaKernel& kernel = plan.cuda_kernels(k);
    if (kernel.cubin().empty() || kernel.entries_size() == 0)
      throw Error(
          fmt::format("{}: CUDA kernel {} ('{}') has no cubin or no entries", what, k, kernel.name()));
    if (kernel.workspace_bytes() < 0)
      throw Error(fmt::format("{}: CUDA kernel {} ('{}') has a negative workspace", what, k, kernel.name()));
  }
  for (const Stage& st : plan.stages()) {
    const bool cuda = is_cuda_device(st.device());
    if (!cuda && st.device() != "cpu" && !st.device().empty())
      throw Error(fmt::format("{}: stage device '{}' is neither cpu nor cuda", what, st.device()));
    for (const Step& step : st.steps()) {
      const std::string where = fmt::format("{}: step '{}'", what, step.name());
      if (cuda)
        validate_cuda_step(plan, step, where);
      else if (step.has_cuda())
        throw Error(fmt::format("{} of a CPU stage has a CUDA binding", where));
    }
  }
}

CudaStepCounts count_cuda_steps(const Plan& plan) {
  CudaStepCounts n;
  n.generated_kernels = plan.cuda_kernels_size();
  for (const Stage& st : plan.stages())
    for (const Step& step : st.steps()) {
      if (!step.has_cuda()) continue;
      switch (step.cuda().kind()) {
        case CudaStep::KERNEL:
          ++n.kernel_steps;
          break;
        case CudaStep::LIBRARY:
          ++n.library_calls;
          break;
        case CudaStep::HOST:
          ++(is_host_kernel_step(step) ? n.host_kernel_steps : n.host_steps);
          break;
        default:
          break;
      }
    }
  return n;
}

}  // namespace dlc::plan
