// A CUDA stage's step run by its CPU kernel on host copies of its operands (host_kernel_step.h).
#include "runtime/cuda/host_kernel_step.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "dlc/error.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_values.h"

namespace dlc::cuda {

namespace {

constexpr size_t kAlign = 64;

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Each distinct operand buffer of the step and its offset in the host memory, in operand order.
std::map<int32_t, size_t> host_offsets(const plan::Stage& stage, const plan::Step& step, size_t* total) {
  std::map<int32_t, size_t> offsets;
  size_t end = 0;
  for (const auto* operands : {&step.inputs(), &step.outputs()})
    for (int32_t b : *operands)
      if (b >= 0 && offsets.emplace(b, end).second)
        end += aligned(plan::buffer_type(stage.buffers(b)).bytes());
  if (total) *total = end;
  return offsets;
}

}  // namespace

size_t HostKernelStep::host_bytes(const plan::Stage& stage, const plan::Step& step) {
  size_t total = 0;
  host_offsets(stage, step, &total);
  return total;
}

size_t HostKernelStep::stage_host_bytes(const plan::Stage& stage) {
  size_t bytes = 0;
  for (const plan::Step& s : stage.steps())
    if (plan::is_host_kernel_step(s)) bytes = std::max(bytes, host_bytes(stage, s));
  return bytes;
}

HostKernelStep::HostKernelStep(const plan::Stage& stage, const plan::Step& step, uint8_t* arena,
                               uint8_t* host) {
  const std::map<int32_t, size_t> offsets = host_offsets(stage, step, nullptr);
  kernel_ = std::make_unique<cpu::StepKernel>(stage, step, [&](int32_t b) { return host + offsets.at(b); });
  auto copies = [&](const auto& operands, bool to_host, std::vector<ByteCopy>& out) {
    std::set<int32_t> seen;
    for (int32_t b : operands) {
      if (b < 0 || !seen.insert(b).second) continue;
      uint8_t* device = arena + stage.buffers(b).offset();
      uint8_t* copy = host + offsets.at(b);
      const size_t bytes = plan::buffer_type(stage.buffers(b)).bytes();
      out.push_back(to_host ? ByteCopy{copy, device, bytes} : ByteCopy{device, copy, bytes});
    }
  };
  copies(step.inputs(), true, to_host_);
  copies(step.outputs(), false, to_device_);
}

void HostKernelStep::run() noexcept {
  try {
    kernel_->run();
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (error_.empty()) error_ = e.what();
  }
}

std::string HostKernelStep::take_error() {
  std::lock_guard<std::mutex> lock(error_mutex_);
  return std::exchange(error_, {});
}

}  // namespace dlc::cuda
