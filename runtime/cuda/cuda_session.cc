// The CUDA session (cuda_session.h). Library calls are built first (their scratch sizes the shared
// workspace), then one cudaMalloc holds the arena, the workspace, the multi-tensor tables and the
// input staging (device_memory.h). Steps run in plan order on one compute stream: generated
// kernels from the plan's cubins, cuBLASLt and cuDNN calls (library_call.h), device copies, and
// the steps with no CUDA path by their CPU kernels on pinned host copies (host_kernel_step.h). Inputs
// go host -> pinned buffer -> device staging on a copy stream as soon as they are set, and into
// the arena at the start of the next run, so a batch uploads while the previous step computes.
// With SessionOptions::cuda_graph the steps are captured once into a CUDA Graph and replayed.
#include "runtime/cuda/cuda_session.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <utility>

#include "codegen/cuda/kernel_source.h"
#include "dlc/error.h"
#include "runtime/cuda/check.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/device_memory.h"
#include "runtime/cuda/host_kernel_step.h"
#include "runtime/cuda/kernel_launch.h"
#include "runtime/cuda/library_call.h"
#include "runtime/cuda/module.h"
#include "runtime/cuda/owned_handle.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "runtime/plan/plan_values.h"
#include "runtime/plan/stage_bindings.h"
#include "runtime/step_profile.h"

namespace dlc::cuda {

namespace {

int device_ordinal(const std::string& device) {
  std::smatch m;
  if (std::regex_match(device, m, std::regex("cuda(?::([0-9]+))?")))
    return m[1].matched ? std::stoi(m[1]) : 0;
  throw Error(fmt::format("stage device '{}' is not cuda or cuda:N", device));
}

// The compiled program of a plan kernel, as CudaModule loads it.
CompiledProgram program_of(const plan::CudaKernel& k) {
  CompiledProgram p;
  p.name = k.name();
  p.arch = k.arch();
  p.cubin = k.cubin();
  for (const plan::CudaKernelEntry& e : k.entries()) {
    p.kernels.push_back(e.name());
    p.lowered_names.push_back(e.lowered_name());
  }
  return p;
}

using Stream = OwnedHandle<cudaStream_t, cudaStreamDestroy>;
using Event = OwnedHandle<cudaEvent_t, cudaEventDestroy>;
using Graph = OwnedHandle<cudaGraph_t, cudaGraphDestroy>;
using GraphExec = OwnedHandle<cudaGraphExec_t, cudaGraphExecDestroy>;
using PinnedBuffer = OwnedHandle<void*, cudaFreeHost>;

struct PreparedStep {
  std::string name, op;
  std::vector<ByteCopy> copies;  // device copies before the step (in-place kernels' results, a residual)
  std::optional<KernelStep> kernel;
  const LibraryCall* library = nullptr;
  LibraryOperands operands;  // library
  HostKernelStep* host = nullptr;
};

void CUDART_CB run_host_kernel_step(void* step) { static_cast<HostKernelStep*>(step)->run(); }

// A graph input or label: its pinned host buffer and its staging copy on the device.
struct StagedInput {
  Session::Signature signature;
  void* arena = nullptr;
  void* staging = nullptr;
  PinnedBuffer pinned;
  size_t bytes = 0;
  bool pending = false;  // uploaded to staging, not yet copied into the arena
};

class CudaSession final : public Session {
 public:
  CudaSession(const plan::Plan& p, SessionOptions options) : options_(options) {
    plan::validate_plan(p, "plan");
    if (p.stages_size() != 1)
      throw Error(fmt::format("plan has {} stages; this runtime runs single-stage plans", p.stages_size()));
    const plan::Stage& st = p.stages(0);
    device_ = st.device();
    const int ordinal = device_ordinal(device_);
    const int count = cuda_device_count();
    if (ordinal >= count)
      throw Error(
          count == 0
              ? fmt::format("the plan runs on {}, but no CUDA device is available here", device_)
              : fmt::format("the plan runs on {}, but this machine has {} CUDA device(s)", device_, count));
    for (const plan::Step& s : st.steps())
      if (s.cuda().kind() == plan::CudaStep::LIBRARY && !implements_library_call(s.cuda().call()))
        throw Error(fmt::format("step '{}' (op {}) calls {}, which this CUDA runtime does not implement yet",
                                s.name(), s.kernel(), s.cuda().call()));
    DLC_CUDA_CHECK(cudaSetDevice(ordinal));
    DLC_CUDA_CHECK(cudaStreamCreateWithFlags(compute_.out(), cudaStreamNonBlocking));
    DLC_CUDA_CHECK(cudaStreamCreateWithFlags(copy_.out(), cudaStreamNonBlocking));
    DLC_CUDA_CHECK(cudaEventCreateWithFlags(uploaded_.out(), cudaEventDisableTiming));
    DLC_CUDA_CHECK(cudaEventCreateWithFlags(consumed_.out(), cudaEventDisableTiming));

    // Library calls first: descriptors and algorithms, and the scratch they need.
    handles_ = std::make_unique<LibraryHandles>(compute_.get(), options_.cudnn_benchmark);
    StageLibraryCalls library = make_library_calls(*handles_, st);
    library_calls_ = std::move(library.by_step);

    layout_ = device_memory_layout(p, st, library.workspace_bytes);
    size_t free_bytes = 0, total_bytes = 0;
    DLC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    check_device_fits(layout_, int64_t(free_bytes), int64_t(total_bytes), device_);
    memory_ = DeviceBuffer(size_t(std::max<int64_t>(layout_.total_bytes, 256)));
    uint8_t* base = memory_.as<uint8_t>();
    arena_ = base;

    bindings_ = plan::StageBindings(p);
    for (const plan::Buffer& b : st.buffers()) {
      if (b.init() >= 0) {
        const plan::TensorValue& value = p.initial_values(b.init());
        if (value.zeros())
          DLC_CUDA_CHECK(cudaMemset(arena_ + b.offset(), 0, plan::buffer_type(b).bytes()));
        else
          DLC_CUDA_CHECK(cudaMemcpy(arena_ + b.offset(), value.data().data(), value.data().size(),
                                    cudaMemcpyHostToDevice));
      }
    }
    for (const plan::CudaKernel& k : p.cuda_kernels())
      modules_.push_back(std::make_unique<CudaModule>(program_of(k)));
    prepare_host_steps(st);
    prepare_steps(p, st, base);
    prepare_inputs(p, base);
    if (StepProfile::requested()) profile_ = std::make_unique<StepProfile>();
    // The initial values and tables went up with cudaMemcpy from pageable memory, which may return
    // before the copy lands and is not ordered with the (non-blocking) compute stream.
    DLC_CUDA_CHECK(cudaDeviceSynchronize());
  }

  ~CudaSession() override {
    cudaStreamSynchronize(compute_.get());
    cudaStreamSynchronize(copy_.get());
    if (profile_) profile_->print(stderr);
  }

  const std::vector<Signature>& inputs() const override { return bindings_.inputs(); }
  const std::vector<Signature>& outputs() const override { return bindings_.outputs(); }

  // Host -> pinned -> device staging on the copy stream, after the last run took the previous
  // batch out of staging.
  void set_input(const std::string& name, const Tensor& value) override {
    StagedInput& in = staged(name);
    if (value.type != in.signature.type)
      throw Error(
          fmt::format("input '{}': expected {}, got {}", name, in.signature.type.str(), value.type.str()));
    DLC_CUDA_CHECK(cudaStreamSynchronize(copy_.get()));  // the pinned buffer's last upload is done
    std::memcpy(in.pinned.get(), value.bytes.data(), in.bytes);
    DLC_CUDA_CHECK(cudaStreamWaitEvent(copy_.get(), consumed_.get(), 0));
    DLC_CUDA_CHECK(
        cudaMemcpyAsync(in.staging, in.pinned.get(), in.bytes, cudaMemcpyHostToDevice, copy_.get()));
    DLC_CUDA_CHECK(cudaEventRecord(uploaded_.get(), copy_.get()));
    in.pending = true;
  }

  void run() override {
    check_host_steps();  // an error of the last run's host steps
    bool pending = false;
    for (const StagedInput& in : inputs_staged_) pending = pending || in.pending;
    if (pending) {
      DLC_CUDA_CHECK(cudaStreamWaitEvent(compute_.get(), uploaded_.get(), 0));
      for (StagedInput& in : inputs_staged_)
        if (std::exchange(in.pending, false))
          DLC_CUDA_CHECK(
              cudaMemcpyAsync(in.arena, in.staging, in.bytes, cudaMemcpyDeviceToDevice, compute_.get()));
      DLC_CUDA_CHECK(cudaEventRecord(consumed_.get(), compute_.get()));
    }
    if (profile_) {
      run_profiled();
    } else if (options_.cuda_graph && runs_ > 0) {
      // Captured on the second run: the first runs eagerly, so that the libraries' one-time setup
      // (cuDNN's engines, cuBLASLt's kernels) happens outside the capture.
      if (!graph_exec_.get()) capture_graph();
      DLC_CUDA_CHECK(cudaGraphLaunch(graph_exec_.get(), compute_.get()));
    } else {
      for (PreparedStep& s : steps_) run_step(s);
    }
    ++runs_;
  }

  Tensor output(const std::string& name) const override { return download(bindings_.output_buffer(name)); }

  std::vector<std::string> state_names() const override { return bindings_.state_names(); }

  Tensor read_state(const std::string& name) const override { return download(bindings_.state_buffer(name)); }

  void write_state(const std::string& name, const Tensor& value) override {
    const int buffer = bindings_.state_buffer(name);
    bindings_.check_type(buffer, value, fmt::format("state '{}'", name));
    DLC_CUDA_CHECK(cudaMemcpyAsync(arena_ + bindings_.offset(buffer), value.bytes.data(), value.bytes.size(),
                                   cudaMemcpyHostToDevice, compute_.get()));
    DLC_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
  }

  std::string memory_report() const override {
    size_t free_bytes = 0, total_bytes = 0;
    DLC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::string host;
    if (!host_steps_.empty())
      host = fmt::format("; {} steps on the host ({:.1f} MiB pinned)", host_steps_.size(),
                         double(host_memory_bytes_) / (1 << 20));
    return fmt::format("{} {}: {}{}; {:.1f} of {:.1f} MiB free", device_,
                       device_description(device_ordinal(device_)), layout_.describe(), host,
                       double(free_bytes) / (1 << 20), double(total_bytes) / (1 << 20));
  }

 private:
  void prepare_steps(const plan::Plan& p, const plan::Stage& st, uint8_t* base) {
    const DeviceRegions regions{arena_, base + layout_.workspace_offset, layout_.workspace_bytes};
    uint8_t* table = base + layout_.table_offset;
    for (int i = 0; i < st.steps_size(); ++i) {
      const plan::Step& s = st.steps(i);
      PreparedStep ps;
      ps.name = s.name();
      ps.op = s.kernel();
      const plan::CudaStep& c = s.cuda();
      auto address = [&](int32_t buffer) { return buffer_address(st, buffer, arena_); };
      for (const plan::CudaCopy& copy : c.copies()) {
        void* dst = address(s.outputs(copy.output()));
        const void* src = address(s.inputs(copy.input()));
        if (dst != src) ps.copies.push_back({dst, src, bindings_.type(s.outputs(copy.output())).bytes()});
      }
      switch (c.kind()) {
        case plan::CudaStep::KERNEL:
          ps.kernel = prepare_kernel_step(p, st, s, regions, table);
          if (!ps.kernel->table_rows.empty()) {
            const size_t bytes = ps.kernel->table_rows.size() * sizeof(codegen::cuda::MultiTensorEntry);
            DLC_CUDA_CHECK(cudaMemcpy(table, ps.kernel->table_rows.data(), bytes, cudaMemcpyHostToDevice));
            table += codegen::cuda::align256(int64_t(bytes));
          }
          break;
        case plan::CudaStep::LIBRARY:
          ps.library = library_calls_[size_t(i)].get();
          ps.operands = library_operands(st, s, arena_);
          break;
        case plan::CudaStep::HOST:
          if (c.call() == "copy")
            ps.copies.push_back(
                {address(s.outputs(0)), address(s.inputs(0)), bindings_.type(s.outputs(0)).bytes()});
          if (plan::is_host_kernel_step(s)) ps.host = host_steps_.at(i).get();
          break;
        default:
          break;  // validate_plan rejected it
      }
      steps_.push_back(std::move(ps));
    }
    workspace_ = regions.workspace;
  }

  // The host steps share one pinned buffer: the stream orders each one's copies and run after the
  // previous one's.
  void prepare_host_steps(const plan::Stage& st) {
    host_memory_bytes_ = HostKernelStep::stage_host_bytes(st);
    if (host_memory_bytes_ > 0) DLC_CUDA_CHECK(cudaMallocHost(host_memory_.out(), host_memory_bytes_));
    for (int i = 0; i < st.steps_size(); ++i) {
      const plan::Step& s = st.steps(i);
      if (plan::is_host_kernel_step(s))
        host_steps_[i] =
            std::make_unique<HostKernelStep>(st, s, arena_, static_cast<uint8_t*>(host_memory_.get()));
    }
  }

  // Throws the first error a host step met since the last check.
  void check_host_steps() const {
    for (auto& [index, step] : host_steps_)
      if (std::string error = step->take_error(); !error.empty()) throw Error(error);
  }

  void prepare_inputs(const plan::Plan& p, uint8_t* base) {
    uint8_t* staging = base + layout_.staging_offset;
    for (const auto* bindings : {&p.inputs(), &p.labels()})
      for (const plan::Binding& b : *bindings) {
        StagedInput in;
        in.signature = {b.name(), bindings_.type(b.buffer())};
        in.arena = arena_ + bindings_.offset(b.buffer());
        in.staging = staging;
        in.bytes = in.signature.type.bytes();
        DLC_CUDA_CHECK(cudaMallocHost(in.pinned.out(), std::max<size_t>(in.bytes, 1)));
        staging += codegen::cuda::align256(int64_t(in.bytes));
        inputs_staged_.push_back(std::move(in));
      }
  }

  void run_step(PreparedStep& s) {
    for (const ByteCopy& c : s.copies)
      DLC_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, compute_.get()));
    if (s.host) {
      for (const ByteCopy& c : s.host->to_host())
        DLC_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToHost, compute_.get()));
      DLC_CUDA_CHECK(cudaLaunchHostFunc(compute_.get(), run_host_kernel_step, s.host));
      for (const ByteCopy& c : s.host->to_device())
        DLC_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyHostToDevice, compute_.get()));
    }
    if (s.kernel) {
      const CudaModule& module = *modules_[size_t(s.kernel->kernel)];
      for (KernelLaunch& l : s.kernel->launches) {
        std::vector<void*> args = l.arg_addresses();
        module.launch(l.entry, dim3(unsigned(l.grid[0]), unsigned(l.grid[1]), unsigned(l.grid[2])),
                      dim3(unsigned(l.block[0]), unsigned(l.block[1]), unsigned(l.block[2])),
                      size_t(l.shared_bytes), compute_.get(), args.data());
      }
    } else if (s.library) {
      s.library->run(s.operands, workspace_, compute_.get());
    }
  }

  // DLC_PROFILE: each step between two events, timed on the GPU.
  void run_profiled() {
    profile_->add_run();
    Event start, stop;
    DLC_CUDA_CHECK(cudaEventCreate(start.out()));
    DLC_CUDA_CHECK(cudaEventCreate(stop.out()));
    for (PreparedStep& s : steps_) {
      DLC_CUDA_CHECK(cudaEventRecord(start.get(), compute_.get()));
      run_step(s);
      DLC_CUDA_CHECK(cudaEventRecord(stop.get(), compute_.get()));
      DLC_CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      DLC_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      profile_->add(profile_->key(s.op, s.name), ms / 1000.0);
    }
  }

  void capture_graph() {
    Graph graph;
    DLC_CUDA_CHECK(cudaStreamBeginCapture(compute_.get(), cudaStreamCaptureModeThreadLocal));
    try {
      for (PreparedStep& s : steps_) run_step(s);
    } catch (...) {
      cudaStreamEndCapture(compute_.get(), graph.out());  // ends the capture; the graph is released
      throw;
    }
    DLC_CUDA_CHECK(cudaStreamEndCapture(compute_.get(), graph.out()));
    DLC_CUDA_CHECK(cudaGraphInstantiate(graph_exec_.out(), graph.get(), 0));
  }

  StagedInput& staged(const std::string& name) {
    for (StagedInput& in : inputs_staged_)
      if (in.signature.name == name) return in;
    throw Error(fmt::format("unknown input '{}'", name));
  }

  Tensor download(int buffer) const {
    Tensor t(bindings_.type(buffer));
    DLC_CUDA_CHECK(cudaMemcpyAsync(t.bytes.data(), arena_ + bindings_.offset(buffer), t.bytes.size(),
                                   cudaMemcpyDeviceToHost, compute_.get()));
    DLC_CUDA_CHECK(cudaStreamSynchronize(compute_.get()));
    check_host_steps();
    return t;
  }

  // Declared first, destroyed last: the streams and events outlive the library handles and the
  // graph that use them.
  Stream compute_, copy_;
  Event uploaded_, consumed_;
  SessionOptions options_;
  std::string device_;
  DeviceMemoryLayout layout_;
  DeviceBuffer memory_;
  uint8_t* arena_ = nullptr;
  void* workspace_ = nullptr;
  std::unique_ptr<LibraryHandles> handles_;
  std::vector<std::unique_ptr<LibraryCall>> library_calls_;  // per step; null for the others
  plan::StageBindings bindings_;
  std::vector<std::unique_ptr<CudaModule>> modules_;
  PinnedBuffer host_memory_;  // the host steps' operands
  size_t host_memory_bytes_ = 0;
  std::map<int, std::unique_ptr<HostKernelStep>> host_steps_;  // by step index
  std::vector<PreparedStep> steps_;
  std::vector<StagedInput> inputs_staged_;
  std::unique_ptr<StepProfile> profile_;
  int64_t runs_ = 0;
  // Declared last, destroyed first: before the modules and library handles its nodes launch.
  GraphExec graph_exec_;
};

}  // namespace

std::unique_ptr<Session> create_cuda_session(const plan::Plan& plan, SessionOptions options) {
  return std::make_unique<CudaSession>(plan, options);
}

}  // namespace dlc::cuda
