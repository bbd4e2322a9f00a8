// ONNX import: a ModelProto becomes an IR graph with static shapes, canonicalized into the core
// op set. Shape arithmetic (Shape, Gather, Concat, … on constants) is folded while importing.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "dlc/tensor.h"
#include "ir/evaluator.h"
#include "ir/graph.h"

namespace onnx {
class ModelProto;
}

namespace dlc::frontend {

struct ImportOptions {
  /// Binds a symbolic leading dimension of every graph input (0: unset).
  int64_t batch = 0;
  /// Binds a graph input's full shape (--shape NAME=D0,D1,…).
  std::map<std::string, Shape> shapes;
  /// Values of graph inputs known at compile time (dlc run): their shapes bind symbolic dims,
  /// and operands that must be constant (a Reshape's shape, …) may be read from them.
  std::map<std::string, Tensor> input_values;
  /// Evaluates nodes whose inputs are all constants (shape arithmetic); null: no folding.
  ir::ConstantEvaluator* evaluator = nullptr;
};

/// Parses a serialized model (`what` names it in errors: empty, not a model, no graph).
onnx::ModelProto parse_onnx_model(const std::string& bytes, const std::string& what);
/// Reads and imports a .onnx file; throws dlc::Error naming the file, node or input.
std::unique_ptr<ir::Graph> import_onnx_file(const std::string& path, const ImportOptions& options);
/// Imports a parsed model; `base_dir` resolves external data, `what` names it in errors.
std::unique_ptr<ir::Graph> import_onnx_model(const onnx::ModelProto& model, const std::string& base_dir,
                                             const ImportOptions& options, const std::string& what);

}  // namespace dlc::frontend
