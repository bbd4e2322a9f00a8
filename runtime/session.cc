// The CPU session: one arena per stage, persistent buffers initialized from the plan, steps run
// in order by the CPU kernels.
#include "dlc/session.h"

#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "dlc/error.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/step_kernel.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "runtime/plan/plan_values.h"
#include "runtime/step_profile.h"

#if DLC_HAVE_CUDA
#include "runtime/cuda/cuda_session.h"
#endif

namespace dlc {

namespace {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

class CpuSession final : public Session {
 public:
  CpuSession(const plan::Plan& p, SessionOptions options) {
    plan::validate_plan(p, "plan");
    if (p.stages_size() != 1)
      throw Error(fmt::format("plan has {} stages; this runtime runs single-stage plans", p.stages_size()));
    if (options.threads > 0) omp_set_num_threads(options.threads);
    const plan::Stage& st = p.stages(0);
    arena_bytes_ = st.arena_bytes();
    peak_bytes_ = st.peak_bytes();
    size_t arena_bytes = size_t(std::max<int64_t>(st.arena_bytes(), 64));
    arena_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (arena_bytes + 63) / 64 * 64)));
    if (!arena_) throw Error(fmt::format("cannot allocate a {}-byte arena", arena_bytes));
    for (const plan::Buffer& b : st.buffers()) {
      if (b.kind() == plan::Buffer::PARAMETER || b.kind() == plan::Buffer::STATE) {
        state_names_.push_back(b.name());
        state_index_[b.name()] = int(views_.size());
      }
      cpu::TensorView v{DType(b.dtype()), Shape(b.dims().begin(), b.dims().end()), arena_.get() + b.offset()};
      if (b.init() >= 0) plan::copy_value(p.initial_values(b.init()), v.data);
      views_.push_back(std::move(v));
    }
    for (const plan::Step& s : st.steps())
      steps_.push_back(
          std::make_unique<cpu::StepKernel>(st, s, [&](int32_t b) { return views_[size_t(b)].data; }));
    auto bind = [&](const auto& bindings, std::vector<Signature>& sigs) {
      for (const plan::Binding& b : bindings) {
        sigs.push_back({b.name(), plan::buffer_type(st.buffers(b.buffer()))});
        buffer_of_[b.name()] = b.buffer();
      }
    };
    bind(p.inputs(), inputs_);
    bind(p.labels(), inputs_);
    bind(p.outputs(), outputs_);
    if (StepProfile::requested()) profile_ = std::make_unique<StepProfile>();
  }

  ~CpuSession() override {
    if (profile_) profile_->print(stderr);
  }

  const std::vector<Signature>& inputs() const override { return inputs_; }
  const std::vector<Signature>& outputs() const override { return outputs_; }

  void set_input(const std::string& name, const Tensor& value) override {
    const cpu::TensorView& v = view_of(name, inputs_, "input");
    if (value.type.dtype != v.dtype || value.type.shape != v.dims)
      throw Error(fmt::format("input '{}': expected {}, got {}", name, TensorType{v.dtype, v.dims}.str(),
                              value.type.str()));
    copy_bytes(v.data, value.bytes.data(), value.bytes.size());
  }

  void run() override {
    using Clock = std::chrono::steady_clock;
    if (profile_) profile_->add_run();
    for (const std::unique_ptr<cpu::StepKernel>& s : steps_) {
      if (!profile_) {
        s->run();
        continue;
      }
      const Clock::time_point t0 = Clock::now();
      s->run();
      profile_->add(profile_->key(s->kernel(), s->name()),
                    std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }

  Tensor output(const std::string& name) const override {
    return copy_out(view_of(name, outputs_, "output"));
  }

  std::vector<std::string> state_names() const override { return state_names_; }

  Tensor read_state(const std::string& name) const override { return copy_out(state_view(name)); }

  void write_state(const std::string& name, const Tensor& value) override {
    const cpu::TensorView& v = state_view(name);
    if (value.type.dtype != v.dtype || value.type.shape != v.dims)
      throw Error(fmt::format("state '{}': expected {}, got {}", name, TensorType{v.dtype, v.dims}.str(),
                              value.type.str()));
    copy_bytes(v.data, value.bytes.data(), value.bytes.size());
  }

  std::string memory_report() const override {
    return fmt::format("cpu: arena {:.1f} MiB (planned peak {:.1f} MiB)", double(arena_bytes_) / (1 << 20),
                       double(peak_bytes_) / (1 << 20));
  }

 private:
  static Tensor copy_out(const cpu::TensorView& v) {
    Tensor t(TensorType{v.dtype, v.dims});
    copy_bytes(t.bytes.data(), v.data, t.bytes.size());
    return t;
  }

  const cpu::TensorView& state_view(const std::string& name) const {
    auto it = state_index_.find(name);
    if (it == state_index_.end())
      throw Error(fmt::format("the plan has no parameter or state named '{}'", name));
    return views_[it->second];
  }

  const cpu::TensorView& view_of(const std::string& name, const std::vector<Signature>& sigs,
                                 const char* kind) const {
    for (const Signature& s : sigs)
      if (s.name == name) return views_[buffer_of_.at(name)];
    throw Error(fmt::format("unknown {} '{}'", kind, name));
  }

  std::unique_ptr<uint8_t, AlignedFree> arena_;
  int64_t arena_bytes_ = 0, peak_bytes_ = 0;
  std::vector<cpu::TensorView> views_;
  std::vector<std::unique_ptr<cpu::StepKernel>> steps_;
  std::vector<Signature> inputs_, outputs_;
  std::map<std::string, int> buffer_of_;
  std::vector<std::string> state_names_;
  std::map<std::string, int> state_index_;
  std::unique_ptr<StepProfile> profile_;  // null unless DLC_PROFILE is set
};

}  // namespace

namespace {
Session::CudaSessionFactory cuda_session_factory = nullptr;  // null: the CUDA runtime's
}  // namespace

void Session::set_cuda_session_factory(CudaSessionFactory factory) { cuda_session_factory = factory; }

std::unique_ptr<Session> Session::create(const plan::Plan& plan, SessionOptions options) {
  if (plan::has_cuda_stage(plan)) {
    if (cuda_session_factory) return cuda_session_factory(plan, options);
#if DLC_HAVE_CUDA
    return cuda::create_cuda_session(plan, options);
#else
    throw Error("the plan is compiled for a CUDA device, and this dlc was built without the CUDA Toolkit");
#endif
  }
  return std::make_unique<CpuSession>(plan, options);
}

std::unique_ptr<Session> Session::load(const std::string& path, SessionOptions options) {
  return create(plan::read_plan_file(path), options);
}

}  // namespace dlc
