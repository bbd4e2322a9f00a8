// What an ONNX op translator sees: its NodeProto's inputs, attributes and outputs, and the means
// to emit IR nodes. Translators live in onnx_ops/<family>.cc and are listed in onnx_ops/*.def.
#pragma once

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <set>
#include <string>
#include <vector>

#include "dlc/error.h"
#include "frontend/onnx_import.h"
#include "ir/graph.h"

namespace dlc::frontend {

class Importer;

class ImportContext {
 public:
  ImportContext(Importer& importer, const onnx::NodeProto& node, int64_t opset);

  const onnx::NodeProto& node() const { return node_; }
  /// The model's ai.onnx opset version.
  int64_t opset() const { return opset_; }
  ir::Graph& graph();

  // ---- inputs (absent optional inputs have empty names)
  int num_inputs() const { return node_.input_size(); }
  bool has_input(int i) const { return i < num_inputs() && !node_.input(i).empty(); }
  /// The IR value of input i; fails if absent.
  ir::Value* input(int i);
  const TensorType& input_type(int i) { return input(i)->type; }
  /// The input's value if known at compile time (a constant, an initializer, or a bound input
  /// value), else nullptr.
  const Tensor* constant_input(int i);
  /// Same, but fails "input i (`what`) must be a compile-time constant" if unknown.
  const Tensor& required_constant(int i, const char* what);
  /// The IR value bound to an ONNX value name; fails if the name is not defined yet.
  ir::Value* value(const std::string& onnx_name);

  // ---- attributes
  bool has_attr(const std::string& name) const;
  int64_t attr_int(const std::string& name, int64_t dflt) const;
  double attr_float(const std::string& name, double dflt) const;
  std::string attr_string(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> dflt = {}) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> dflt = {}) const;
  std::vector<std::string> attr_strings(const std::string& name) const;  // empty if absent
  Tensor attr_tensor(const std::string& name) const;
  const onnx::GraphProto& attr_graph(const std::string& name) const;  // fails if absent

  /// Translates subgraph `g`'s nodes into the graph being built (an If branch taken at compile
  /// time; it may read the enclosing graph's values) and returns its outputs' values.
  std::vector<ir::Value*> inline_graph(const onnx::GraphProto& g);

  // ---- outputs
  int num_outputs() const { return node_.output_size(); }
  bool has_output(int i) const { return i < num_outputs() && !node_.output(i).empty(); }

  /// Emits an IR node named after the ONNX node and returns its outputs (nullptr where
  /// `want_outputs[i]` is false). Folds it to constants when every input is a constant.
  std::vector<ir::Value*> emit_multi(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs,
                                     std::vector<bool> want_outputs);
  /// Single-output form.
  ir::Value* emit(ir::OpKind op, std::vector<ir::Value*> inputs, Attrs attrs = {});
  /// A new constant value.
  ir::Value* constant(Tensor value, const std::string& hint = "const");
  ir::Value* scalar(DType dtype, double v);

  /// Binds ONNX output i to `v` (named after the ONNX output when this node created it).
  void set_output(int i, ir::Value* v);

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw Error(fmt::format("node '{}' ({}): {}", node_.name(), node_.op_type(),
                            fmt::format(f, std::forward<Args>(args)...)));
  }

 private:
  const onnx::AttributeProto* find_attr(const std::string& name) const;
  Importer& importer_;
  const onnx::NodeProto& node_;
  int64_t opset_;
  std::set<const ir::Value*> created_;
};

using Translator = void (*)(ImportContext& ctx);
/// ONNX's training domain (the Gradient op).
inline constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
/// Whether dlc translates ops of `domain` ("" and "ai.onnx" are the default domain).
bool is_supported_domain(const std::string& domain);
/// The translator of an op type of a supported domain, or nullptr.
Translator find_translator(const std::string& domain, const std::string& op_type);

}  // namespace dlc::frontend
