// Reading, validating and atomically writing .dlcplan files.
#pragma once

#include <string>
#include <string_view>

#include "runtime/plan/plan.pb.h"

namespace dlc::plan {

/// The first bytes of every .dlcplan file; the serialized Plan follows.
inline constexpr std::string_view kPlanMagic = "DLCPLAN\n";

/// Parses and validates; throws dlc::Error naming the file (missing, corrupt, wrong version).
Plan read_plan_file(const std::string& path);
/// Writes to a temporary file beside `path`, then renames it over `path`.
void write_plan_file(const Plan& plan, const std::string& path);
/// Structural checks: format version, buffer indices, arena bounds, init indices, kernels, and
/// the CUDA bindings of CUDA stages (cuda_steps.h).
/// `what` names the plan in messages.
void validate_plan(const Plan& plan, const std::string& what);

}  // namespace dlc::plan
