// The importer's state while translating one ONNX graph: the IR graph being built and the
// binding of ONNX value names to IR values.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>

#include "frontend/onnx_import.h"

namespace dlc::frontend {

class Importer {
 public:
  Importer(const ImportOptions& options, std::string base_dir, std::string what)
      : options_(options),
        base_dir_(std::move(base_dir)),
        what_(std::move(what)),
        graph_(std::make_unique<ir::Graph>()) {}

  std::unique_ptr<ir::Graph> run(const onnx::ModelProto& model);

  ir::Graph& graph() { return *graph_; }
  const ImportOptions& options() const { return options_; }
  /// The IR value bound to an ONNX name, or nullptr.
  ir::Value* lookup(const std::string& onnx_name) const;
  void bind(const std::string& onnx_name, ir::Value* v) { bound_[onnx_name] = v; }
  /// The compile-time value of an ONNX name, if known.
  const Tensor* known_value(const std::string& onnx_name) const;
  /// Translates `g`'s nodes in order: the model's graph, or an If branch inlined where its
  /// condition is known at compile time. `opset` is the model's ai.onnx opset.
  void import_nodes(const onnx::GraphProto& g, int64_t opset);

 private:
  void import_inputs(const onnx::GraphProto& g);
  TensorType bind_input_type(const onnx::ValueInfoProto& vi);

  const ImportOptions& options_;
  std::string base_dir_, what_;
  std::unique_ptr<ir::Graph> graph_;
  std::map<std::string, ir::Value*> bound_;
};

}  // namespace dlc::frontend
