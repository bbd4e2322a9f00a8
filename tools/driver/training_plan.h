// Training plans as files and their fingerprint: `dlc compile --train` writes a plan whose
// TrainingInfo names the model, batch and micro-steps; `dlc train PLAN` and `dlc export PLAN`
// read it back. The fingerprint identifies what a checkpoint's state belongs to.
#pragma once

#include <string>

#include "runtime/plan/plan.pb.h"

namespace dlc::driver {

/// Whether `path` is a plan file rather than an ONNX model: its name ends in .dlcplan or its
/// first bytes are the plan magic.
bool is_plan_path(const std::string& path);

/// Reads a plan that has TrainingInfo; throws dlc::Error naming the file otherwise.
plan::Plan read_training_plan(const std::string& path);

/// A hex digest of everything in the plan that decides the meaning of its state: buffers,
/// steps, bindings and the training settings — not the initial values, nor where the model
/// came from. Two compiles of one model with the same options give the same fingerprint.
std::string plan_fingerprint(const plan::Plan& plan);

}  // namespace dlc::driver
