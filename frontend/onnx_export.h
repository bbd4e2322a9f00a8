// Export of trained weights back to ONNX: the original model (graph, signature, symbolic dims
// and names unchanged) with every initializer that was trained replaced by its new value.
// Training plans carry the model they were compiled from as standalone bytes (external data
// inlined), so `dlc export PLAN --checkpoint CKPT` needs no file besides the two.
#pragma once

#include <map>
#include <string>

#include "dlc/tensor.h"

namespace dlc::frontend {

/// Reads `model_path` and returns it serialized with every external initializer moved inline,
/// so the bytes stand alone. Throws dlc::Error naming the file or initializer.
std::string read_standalone_onnx(const std::string& model_path);

/// Replaces the initializers of `model_bytes` (a standalone model; `what` names it in errors)
/// named in `values` (types must match) and writes the model to `out_path` atomically.
void export_trained_onnx_bytes(const std::string& model_bytes, const std::string& what,
                               const std::map<std::string, Tensor>& values, const std::string& out_path);

/// read_standalone_onnx followed by export_trained_onnx_bytes.
void export_trained_onnx(const std::string& model_path, const std::map<std::string, Tensor>& values,
                         const std::string& out_path);

}  // namespace dlc::frontend
