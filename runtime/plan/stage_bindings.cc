// A single-stage plan's buffer names (stage_bindings.h).
#include "runtime/plan/stage_bindings.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "runtime/plan/plan_values.h"

namespace dlc::plan {

namespace {

int find(const std::map<std::string, int>& buffers, const std::string& name, const char* message) {
  const auto it = buffers.find(name);
  if (it == buffers.end()) throw Error(fmt::format(fmt::runtime(message), name));
  return it->second;
}

}  // namespace

StageBindings::StageBindings(const Plan& plan) {
  const Stage& st = plan.stages(0);
  for (int i = 0; i < st.buffers_size(); ++i) {
    const Buffer& b = st.buffers(i);
    if (b.kind() == Buffer::PARAMETER || b.kind() == Buffer::STATE) {
      state_buffer_[b.name()] = i;
      state_names_.push_back(b.name());
    }
    types_.push_back(buffer_type(b));
    offsets_.push_back(b.offset());
  }
  for (const auto* bindings : {&plan.inputs(), &plan.labels()})
    for (const Binding& b : *bindings) {
      inputs_.push_back({b.name(), type(b.buffer())});
      input_buffer_[b.name()] = b.buffer();
    }
  for (const Binding& b : plan.outputs()) {
    outputs_.push_back({b.name(), type(b.buffer())});
    output_buffer_[b.name()] = b.buffer();
  }
}

int StageBindings::input_buffer(const std::string& name) const {
  return find(input_buffer_, name, "unknown input '{}'");
}

int StageBindings::output_buffer(const std::string& name) const {
  return find(output_buffer_, name, "unknown output '{}'");
}

int StageBindings::state_buffer(const std::string& name) const {
  return find(state_buffer_, name, "the plan has no parameter or state named '{}'");
}

void StageBindings::check_type(int32_t buffer, const Tensor& value, const std::string& what) const {
  if (value.type != type(buffer))
    throw Error(fmt::format("{}: expected {}, got {}", what, type(buffer).str(), value.type.str()));
}

}  // namespace dlc::plan
