// ONNX TensorProto <-> dlc::Tensor, including external data and the .pb files of ONNX's test
// suite.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "dlc/tensor.h"

namespace dlc::frontend {

/// dlc dtype of an ONNX TensorProto data type; nullopt where dlc has none.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
int32_t dtype_to_onnx(DType t);

/// Decodes a TensorProto. `base_dir` resolves external data; `what` names it in errors.
Tensor tensor_from_onnx(const onnx::TensorProto& t, const std::string& base_dir, const std::string& what);
void tensor_to_onnx(const Tensor& t, onnx::TensorProto* out);

/// Reads a serialized TensorProto file (.pb); returns the tensor and its recorded name.
Tensor read_tensor_pb(const std::string& path, std::string* name = nullptr);

}  // namespace dlc::frontend
