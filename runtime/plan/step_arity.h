// How many inputs and outputs a plan step may name, by kernel. Steps are named after the ops of
// the op table (ir/ops.def, the shared vocabulary of compiler and runtime), so the limits come
// from it; validate_plan checks every step against them, since kernels index their operands by
// position.
#pragma once

#include <optional>
#include <string_view>

namespace dlc::plan {

struct StepArity {
  int min_inputs, max_inputs, min_outputs, max_outputs;  // max -1: unbounded

  bool allows(int inputs, int outputs) const {
    return inputs >= min_inputs && (max_inputs < 0 || inputs <= max_inputs) && outputs >= min_outputs &&
           (max_outputs < 0 || outputs <= max_outputs);
  }
};

/// The limits of the op named `kernel`, or nullopt if no op has that name.
std::optional<StepArity> step_arity(std::string_view kernel);

}  // namespace dlc::plan
