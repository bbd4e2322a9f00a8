// .dlcplan reading, validation and writing.
#include "runtime/plan/plan_file.h"

#include <fmt/format.h>

#include <optional>

#include "dlc/checked_shape.h"
#include "dlc/error.h"
#include "dlc/file_util.h"
#include "dlc/session.h"
#include "runtime/cpu/kernel.h"
#include "runtime/plan/cuda_steps.h"
#include "runtime/plan/plan_values.h"
#include "runtime/plan/step_arity.h"

namespace dlc::plan {

Plan read_plan_file(const std::string& path) {
  std::string bytes = read_file(path);
  if (bytes.compare(0, kPlanMagic.size(), kPlanMagic) != 0)
    throw Error(fmt::format("{}: not a dlc plan (bad magic)", path));
  Plan plan;
  if (!plan.ParseFromArray(bytes.data() + kPlanMagic.size(), int(bytes.size() - kPlanMagic.size())))
    throw Error(fmt::format("{}: corrupt plan (protobuf parse failed)", path));
  validate_plan(plan, path);
  return plan;
}

void write_plan_file(const Plan& plan, const std::string& path) {
  std::string bytes(kPlanMagic);
  if (!plan.AppendToString(&bytes)) throw Error(fmt::format("{}: cannot serialize plan", path));
  write_file_atomic(path, bytes);
}

void validate_plan(const Plan& plan, const std::string& what) {
  if (plan.format_version() < kOldestPlanFormatVersion || plan.format_version() > kPlanFormatVersion)
    throw Error(fmt::format("{}: plan format version {} (this dlc reads versions {} to {})", what,
                            plan.format_version(), kOldestPlanFormatVersion, kPlanFormatVersion));
  if (plan.stages_size() == 0) throw Error(fmt::format("{}: plan has no stages", what));
  for (int s = 0; s < plan.stages_size(); ++s) {
    const Stage& st = plan.stages(s);
    for (const Buffer& b : st.buffers()) {
      TensorType t = buffer_type(b);
      if (!checked_num_elements(t.shape, dtype_size(t.dtype)))
        throw Error(
            fmt::format("{}: buffer '{}' has invalid dimensions {}", what, b.name(), shape_str(t.shape)));
      if (b.offset() < 0 || b.offset() > st.arena_bytes() ||
          int64_t(t.bytes()) > st.arena_bytes() - b.offset())
        throw Error(fmt::format("{}: buffer '{}' lies outside the arena", what, b.name()));
      if (b.init() >= plan.initial_values_size() || b.init() < -1)
        throw Error(fmt::format("{}: buffer '{}' has an invalid initial value", what, b.name()));
      if (b.init() >= 0) {
        const TensorType init = value_type(plan.initial_values(b.init()),
                                           fmt::format("{}: initial value of '{}'", what, b.name()));
        if (init != t)
          throw Error(fmt::format("{}: initial value of '{}' is {} but the buffer is {}", what, b.name(),
                                  init.str(), t.str()));
      }
    }
    for (const Step& step : st.steps()) {
      const std::optional<StepArity> arity = step_arity(step.kernel());
      if (!cpu::find_kernel(step.kernel()) || !arity)
        throw Error(fmt::format("{}: step '{}' uses unknown kernel '{}'", what, step.name(), step.kernel()));
      if (!arity->allows(step.inputs_size(), step.outputs_size()))
        throw Error(fmt::format("{}: step '{}' gives kernel '{}' {} inputs and {} outputs", what, step.name(),
                                step.kernel(), step.inputs_size(), step.outputs_size()));
      for (int32_t i : step.inputs())
        if (i < -1 || i >= st.buffers_size())
          throw Error(fmt::format("{}: step '{}' has an invalid input buffer", what, step.name()));
      for (int32_t i : step.outputs())
        if (i < -1 || i >= st.buffers_size())
          throw Error(fmt::format("{}: step '{}' has an invalid output buffer", what, step.name()));
    }
  }
  auto check_bindings = [&](const auto& bindings, const char* kind) {
    for (const Binding& b : bindings)
      if (b.stage() < 0 || b.stage() >= plan.stages_size() || b.buffer() < 0 ||
          b.buffer() >= plan.stages(b.stage()).buffers_size())
        throw Error(fmt::format("{}: {} '{}' is bound to an invalid buffer", what, kind, b.name()));
  };
  check_bindings(plan.inputs(), "input");
  check_bindings(plan.labels(), "label");
  check_bindings(plan.outputs(), "output");
  validate_cuda_steps(plan, what);
}

}  // namespace dlc::plan
