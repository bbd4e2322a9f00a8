// Trained-weights export.
#include "frontend/onnx_export.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <filesystem>

#include "dlc/error.h"
#include "dlc/file_util.h"
#include "frontend/onnx_import.h"
#include "frontend/onnx_tensor.h"

namespace dlc::frontend {

namespace {

std::string serialize(const onnx::ModelProto& model, const std::string& what) {
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw Error(fmt::format("{}: cannot serialize the model", what));
  return bytes;
}

// Writes `t` as the data of `init`, dropping whatever form its data had before.
void set_initializer(onnx::TensorProto& init, const Tensor& t) {
  init.clear_float_data();
  init.clear_double_data();
  init.clear_int32_data();
  init.clear_int64_data();
  init.clear_external_data();
  init.set_data_location(onnx::TensorProto::DEFAULT);
  tensor_to_onnx(t, &init);
}

}  // namespace

std::string read_standalone_onnx(const std::string& model_path) {
  onnx::ModelProto model = parse_onnx_model(read_file(model_path), model_path);
  const std::string base_dir = std::filesystem::path(model_path).parent_path().string();
  for (onnx::TensorProto& init : *model.mutable_graph()->mutable_initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      set_initializer(init, tensor_from_onnx(init, base_dir,
                                             fmt::format("{}: initializer '{}'", model_path, init.name())));
  return serialize(model, model_path);
}

void export_trained_onnx_bytes(const std::string& model_bytes, const std::string& what,
                               const std::map<std::string, Tensor>& values, const std::string& out_path) {
  onnx::ModelProto model = parse_onnx_model(model_bytes, what);
  for (onnx::TensorProto& init : *model.mutable_graph()->mutable_initializer()) {
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      throw Error(fmt::format("{}: initializer '{}' has external data; export needs a standalone model", what,
                              init.name()));
    auto it = values.find(init.name());
    if (it == values.end()) continue;
    const Tensor& t = it->second;
    Shape dims(init.dims().begin(), init.dims().end());
    if (dtype_from_onnx(init.data_type()) != t.type.dtype || dims != t.type.shape)
      throw Error(fmt::format("{}: initializer '{}' is {}, the trained value is {}", what, init.name(),
                              shape_str(dims), t.type.str()));
    set_initializer(init, t);
  }
  write_file_atomic(out_path, serialize(model, out_path));
}

void export_trained_onnx(const std::string& model_path, const std::map<std::string, Tensor>& values,
                         const std::string& out_path) {
  export_trained_onnx_bytes(read_standalone_onnx(model_path), model_path, values, out_path);
}

}  // namespace dlc::frontend
