// Trained-weights export.
#include "frontend/onnx_export.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <filesystem>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "frontend/onnx_tensor.h"

namespace dlc::frontend {

void export_trained_onnx(const std::string& model_path, const std::map<std::string, Tensor>& values,
                         const std::string& out_path) {
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(model_path)))
    throw Error(fmt::format("{}: not a valid ONNX model (protobuf parse failed)", model_path));
  const std::string base_dir = std::filesystem::path(model_path).parent_path().string();
  for (onnx::TensorProto& init : *model.mutable_graph()->mutable_initializer()) {
    auto it = values.find(init.name());
    if (it == values.end()) {
      if (init.data_location() == onnx::TensorProto::EXTERNAL) {
        // Inline untouched external tensors so the exported file stands alone.
        Tensor t =
            tensor_from_onnx(init, base_dir, fmt::format("{}: initializer '{}'", model_path, init.name()));
        init.clear_external_data();
        init.set_data_location(onnx::TensorProto::DEFAULT);
        tensor_to_onnx(t, &init);
      }
      continue;
    }
    const Tensor& t = it->second;
    Shape dims(init.dims().begin(), init.dims().end());
    if (dtype_from_onnx(init.data_type()) != t.type.dtype || dims != t.type.shape)
      throw Error(fmt::format("{}: initializer '{}' is {}, the trained value is {}", model_path, init.name(),
                              shape_str(dims), t.type.str()));
    init.clear_float_data();
    init.clear_double_data();
    init.clear_int32_data();
    init.clear_int64_data();
    init.clear_external_data();
    init.set_data_location(onnx::TensorProto::DEFAULT);
    tensor_to_onnx(t, &init);
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw Error(fmt::format("{}: cannot serialize the model", out_path));
  write_file_atomic(out_path, bytes);
}

}  // namespace dlc::frontend
