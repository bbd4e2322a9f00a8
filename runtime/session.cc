// The CPU session: one arena per stage, persistent buffers initialized from the plan, steps run
// in order by the CPU kernels.
#include "dlc/session.h"

#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "dlc/error.h"
#include "runtime/cpu/step_kernel.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_file.h"
#include "runtime/plan/plan_values.h"
#include "runtime/plan/stage_bindings.h"
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
    bindings_ = plan::StageBindings(p);
    for (const plan::Buffer& b : st.buffers())
      if (b.init() >= 0) plan::copy_value(p.initial_values(b.init()), arena_.get() + b.offset());
    for (const plan::Step& s : st.steps())
      steps_.push_back(std::make_unique<cpu::StepKernel>(st, s, [&](int32_t b) { return address(b); }));
    if (StepProfile::requested()) profile_ = std::make_unique<StepProfile>();
  }

  ~CpuSession() override {
    if (profile_) profile_->print(stderr);
  }

  const std::vector<Signature>& inputs() const override { return bindings_.inputs(); }
  const std::vector<Signature>& outputs() const override { return bindings_.outputs(); }

  void set_input(const std::string& name, const Tensor& value) override {
    write(bindings_.input_buffer(name), value, fmt::format("input '{}'", name));
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

  Tensor output(const std::string& name) const override { return read(bindings_.output_buffer(name)); }

  std::vector<std::string> state_names() const override { return bindings_.state_names(); }

  Tensor read_state(const std::string& name) const override { return read(bindings_.state_buffer(name)); }

  void write_state(const std::string& name, const Tensor& value) override {
    write(bindings_.state_buffer(name), value, fmt::format("state '{}'", name));
  }

  std::string memory_report() const override {
    return fmt::format("cpu: arena {:.1f} MiB (planned peak {:.1f} MiB)", double(arena_bytes_) / (1 << 20),
                       double(peak_bytes_) / (1 << 20));
  }

 private:
  uint8_t* address(int32_t buffer) const { return arena_.get() + bindings_.offset(buffer); }

  Tensor read(int32_t buffer) const {
    Tensor t(bindings_.type(buffer));
    copy_bytes(t.bytes.data(), address(buffer), t.bytes.size());
    return t;
  }

  void write(int32_t buffer, const Tensor& value, const std::string& what) {
    bindings_.check_type(buffer, value, what);
    copy_bytes(address(buffer), value.bytes.data(), value.bytes.size());
  }

  std::unique_ptr<uint8_t, AlignedFree> arena_;
  int64_t arena_bytes_ = 0, peak_bytes_ = 0;
  plan::StageBindings bindings_;
  std::vector<std::unique_ptr<cpu::StepKernel>> steps_;
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
