// Export of trained weights back to ONNX: the original model (graph, signature, symbolic dims
// and names unchanged) with every initializer that was trained replaced by its new value.
#pragma once

#include <map>
#include <string>

#include "dlc/tensor.h"

namespace dlc::frontend {

/// Reads `model_path`, replaces the initializers named in `values` (types must match), and
/// writes `out_path` atomically. Throws dlc::Error naming the file or initializer.
void export_trained_onnx(const std::string& model_path, const std::map<std::string, Tensor>& values,
                         const std::string& out_path);

}  // namespace dlc::frontend
