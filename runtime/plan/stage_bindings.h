// The names a single-stage plan gives its buffers, as a session looks them up: each buffer's type
// and arena offset, the parameters and state (in buffer order), and the inputs (then the labels)
// and outputs with their signatures. The CPU session, the CUDA session and the tests' emulated
// CUDA session each keep one; errors name what was asked for ("unknown input 'x'").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dlc/session.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::plan {

class StageBindings {
 public:
  StageBindings() = default;
  /// The bindings of `plan`'s stage 0.
  explicit StageBindings(const Plan& plan);

  const TensorType& type(int32_t buffer) const { return types_[size_t(buffer)]; }
  int64_t offset(int32_t buffer) const { return offsets_[size_t(buffer)]; }
  const std::vector<Session::Signature>& inputs() const { return inputs_; }
  const std::vector<Session::Signature>& outputs() const { return outputs_; }
  const std::vector<std::string>& state_names() const { return state_names_; }

  /// The buffer of an input (or label), output, or parameter/state; throws dlc::Error for a name
  /// the plan does not bind.
  int input_buffer(const std::string& name) const;
  int output_buffer(const std::string& name) const;
  int state_buffer(const std::string& name) const;

  /// Throws dlc::Error "WHAT: expected TYPE, got TYPE" unless `value` has `buffer`'s type.
  void check_type(int32_t buffer, const Tensor& value, const std::string& what) const;

 private:
  std::vector<TensorType> types_;
  std::vector<int64_t> offsets_;
  std::vector<Session::Signature> inputs_, outputs_;
  std::vector<std::string> state_names_;
  std::map<std::string, int> input_buffer_, output_buffer_, state_buffer_;
};

}  // namespace dlc::plan
