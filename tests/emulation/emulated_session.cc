// The emulated CUDA session (emulated_session.h): runtime/cuda/cuda_session.cc's steps with host
// memory, emulated kernels, and the runtime's own library calls against the emulated cuBLASLt and
// cuDNN (emulated_cublaslt.cc, emulated_cudnn.cc).
#include "tests/emulation/emulated_session.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "codegen/cuda/multi_tensor.h"
#include "codegen/cuda/step_binding.h"
#include "dlc/error.h"
#include "runtime/cuda/device_memory.h"
#include "runtime/cuda/host_kernel_step.h"
#include "runtime/cuda/kernel_launch.h"
#include "runtime/cuda/library_call.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "runtime/plan/plan_values.h"
#include "runtime/plan/stage_bindings.h"
#include "tests/emulation/emulated_device.h"

namespace dlc::emulation {

namespace {

using cuda::ByteCopy;

struct PreparedStep {
  std::vector<ByteCopy> copies;  // before the step
  const EmulatedKernel* kernel = nullptr;
  std::vector<cuda::KernelLaunch> launches;  // launches[e] of entry e
  const cuda::LibraryCall* library = nullptr;
  cuda::LibraryOperands operands;  // library
  std::unique_ptr<cuda::HostKernelStep> host;
};

class EmulatedCudaSession final : public Session {
 public:
  EmulatedCudaSession(const plan::Plan& p, SessionOptions options) {
    plan::validate_plan(p, "plan");
    if (p.stages_size() != 1)
      throw Error(fmt::format("plan has {} stages; this runtime runs single-stage plans", p.stages_size()));
    const plan::Stage& st = p.stages(0);
    // Library calls first, as the CUDA session makes them: their scratch sizes the workspace.
    handles_ = std::make_unique<cuda::LibraryHandles>(nullptr, options.cudnn_benchmark);
    cuda::StageLibraryCalls library = cuda::make_library_calls(*handles_, st);
    library_calls_ = std::move(library.by_step);
    layout_ = cuda::device_memory_layout(p, st, library.workspace_bytes);
    memory_ = HostBuffer(size_t(std::max<int64_t>(layout_.total_bytes, 256)));
    arena_ = memory_.as<uint8_t>();
    bindings_ = plan::StageBindings(p);
    for (const plan::Buffer& b : st.buffers())
      if (b.init() >= 0) {
        const plan::TensorValue& value = p.initial_values(b.init());
        if (value.zeros())
          std::memset(arena_ + b.offset(), 0, plan::buffer_type(b).bytes());
        else
          std::memcpy(arena_ + b.offset(), value.data().data(), value.data().size());
      }
    prepare_steps(p, st);
  }

  const std::vector<Signature>& inputs() const override { return bindings_.inputs(); }
  const std::vector<Signature>& outputs() const override { return bindings_.outputs(); }

  void set_input(const std::string& name, const Tensor& value) override {
    write(bindings_.input_buffer(name), value, fmt::format("input '{}'", name));
  }

  void run() override {
    for (PreparedStep& s : steps_) {
      for (const ByteCopy& c : s.copies) std::memmove(c.dst, c.src, c.bytes);
      for (size_t e = 0; e < s.launches.size(); ++e) {
        cuda::KernelLaunch& l = s.launches[e];
        s.kernel->launch(e, l.grid, l.block, l.shared_bytes, l.args);
      }
      if (s.library) s.library->run(s.operands, workspace_, nullptr);
      if (s.host) run_host_step(*s.host);
    }
  }

  Tensor output(const std::string& name) const override { return read(bindings_.output_buffer(name)); }

  std::vector<std::string> state_names() const override { return bindings_.state_names(); }
  Tensor read_state(const std::string& name) const override { return read(bindings_.state_buffer(name)); }
  void write_state(const std::string& name, const Tensor& value) override {
    write(bindings_.state_buffer(name), value, fmt::format("state '{}'", name));
  }

  std::string memory_report() const override { return "emulated cuda: " + layout_.describe(); }

 private:
  // The emulated kernels of the plan, built in one compiler run from their sources (each KERNEL
  // step bound again as the compiler bound it).
  void build_kernels(const plan::Plan& p, const plan::Stage& st) {
    std::map<int, codegen::cuda::KernelSource> sources;  // by plan kernel
    for (int i = 0; i < st.steps_size(); ++i) {
      const plan::Step& s = st.steps(i);
      const int index = s.cuda().kernel();
      if (s.cuda().kind() != plan::CudaStep::KERNEL || sources.count(index)) continue;
      const codegen::cuda::StepBinding binding = codegen::cuda::bind_cuda_step(p, st, i);
      if (!binding.kernel || binding.kernel->name != p.cuda_kernels(index).name())
        throw Error(fmt::format("step '{}': binding it again gives another kernel than the plan's {}",
                                s.name(), p.cuda_kernels(index).name()));
      sources.emplace(index, *binding.kernel);
    }
    std::vector<const codegen::cuda::KernelSource*> all;
    for (const auto& [index, source] : sources) all.push_back(&source);
    EmulatedKernel::build_all(all);
    for (const auto& [index, source] : sources) kernels_[index] = std::make_unique<EmulatedKernel>(source);
  }

  void prepare_steps(const plan::Plan& p, const plan::Stage& st) {
    build_kernels(p, st);
    const cuda::DeviceRegions regions{arena_, arena_ + layout_.workspace_offset, layout_.workspace_bytes};
    uint8_t* table = arena_ + layout_.table_offset;
    host_memory_.resize(cuda::HostKernelStep::stage_host_bytes(st));  // shared, as in the CUDA session
    for (int i = 0; i < st.steps_size(); ++i) {
      const plan::Step& s = st.steps(i);
      const plan::CudaStep& c = s.cuda();
      PreparedStep ps;
      auto address = [&](int32_t buffer) { return cuda::buffer_address(st, buffer, arena_); };
      for (const plan::CudaCopy& copy : c.copies()) {
        void* dst = address(s.outputs(copy.output()));
        const void* src = address(s.inputs(copy.input()));
        if (dst != src) ps.copies.push_back({dst, src, bindings_.type(s.outputs(copy.output())).bytes()});
      }
      if (c.kind() == plan::CudaStep::KERNEL) {
        ps.kernel = kernels_.at(c.kernel()).get();
        cuda::KernelStep k = cuda::prepare_kernel_step(p, st, s, regions, table);
        if (!k.table_rows.empty()) {
          const size_t bytes = k.table_rows.size() * sizeof(codegen::cuda::MultiTensorEntry);
          std::memcpy(table, k.table_rows.data(), bytes);
          table += codegen::cuda::align256(int64_t(bytes));
        }
        ps.launches = std::move(k.launches);  // one per entry, in entry order
      } else if (c.kind() == plan::CudaStep::LIBRARY) {
        ps.library = library_calls_[size_t(i)].get();
        ps.operands = cuda::library_operands(st, s, arena_);
      } else if (c.kind() == plan::CudaStep::HOST && c.call() == "copy") {
        ps.copies.push_back(
            {address(s.outputs(0)), address(s.inputs(0)), bindings_.type(s.outputs(0)).bytes()});
      } else if (plan::is_host_kernel_step(s)) {
        ps.host = std::make_unique<cuda::HostKernelStep>(st, s, arena_, host_memory_.data());
      }
      steps_.push_back(std::move(ps));
    }
    workspace_ = regions.workspace;
  }

  // As the CUDA session's stream runs it, with memcpy for cudaMemcpyAsync.
  static void run_host_step(cuda::HostKernelStep& step) {
    for (const ByteCopy& c : step.to_host()) std::memcpy(c.dst, c.src, c.bytes);
    step.run();
    if (std::string error = step.take_error(); !error.empty()) throw Error(error);
    for (const ByteCopy& c : step.to_device()) std::memcpy(c.dst, c.src, c.bytes);
  }

  Tensor read(int buffer) const {
    Tensor t(bindings_.type(buffer));
    std::memcpy(t.bytes.data(), arena_ + bindings_.offset(buffer), t.bytes.size());
    return t;
  }

  void write(int buffer, const Tensor& value, const std::string& what) {
    bindings_.check_type(buffer, value, what);
    std::memcpy(arena_ + bindings_.offset(buffer), value.bytes.data(), value.bytes.size());
  }

  cuda::DeviceMemoryLayout layout_;
  HostBuffer memory_;
  uint8_t* arena_ = nullptr;
  plan::StageBindings bindings_;
  std::unique_ptr<cuda::LibraryHandles> handles_;
  std::vector<std::unique_ptr<cuda::LibraryCall>> library_calls_;  // per step; null for the others
  void* workspace_ = nullptr;
  std::map<int, std::unique_ptr<EmulatedKernel>> kernels_;
  std::vector<uint8_t> host_memory_;  // the host steps' operands
  std::vector<PreparedStep> steps_;
};

}  // namespace

std::unique_ptr<Session> create_emulated_cuda_session(const plan::Plan& plan, SessionOptions options) {
  return std::make_unique<EmulatedCudaSession>(plan, options);
}

}  // namespace dlc::emulation
