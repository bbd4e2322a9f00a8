// TensorProto decoding and encoding.
#include "frontend/onnx_tensor.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <fstream>

#include "dlc/checked_shape.h"
#include "dlc/error.h"
#include "dlc/file_util.h"
#include "dlc/half.h"

namespace dlc::frontend {

using onnx::TensorProto;

std::optional<DType> dtype_from_onnx(int32_t t) {
  switch (t) {
    case TensorProto::FLOAT:
      return DType::F32;
    case TensorProto::FLOAT16:
      return DType::F16;
    case TensorProto::BFLOAT16:
      return DType::BF16;
    case TensorProto::DOUBLE:
      return DType::F64;
    case TensorProto::INT64:
      return DType::I64;
    case TensorProto::INT32:
      return DType::I32;
    case TensorProto::INT8:
      return DType::I8;
    case TensorProto::UINT8:
      return DType::U8;
    case TensorProto::BOOL:
      return DType::Bool;
    default:
      return std::nullopt;
  }
}

int32_t dtype_to_onnx(DType t) {
  switch (t) {
    case DType::F32:
      return TensorProto::FLOAT;
    case DType::F16:
      return TensorProto::FLOAT16;
    case DType::BF16:
      return TensorProto::BFLOAT16;
    case DType::F64:
      return TensorProto::DOUBLE;
    case DType::I64:
      return TensorProto::INT64;
    case DType::I32:
      return TensorProto::INT32;
    case DType::I8:
      return TensorProto::INT8;
    case DType::U8:
      return TensorProto::UINT8;
    case DType::Bool:
      return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

namespace {

int64_t external_int(const onnx::StringStringEntryProto& kv, const std::string& what) {
  int64_t v = 0;
  const std::string& text = kv.value();
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw Error(fmt::format("{}: external data {} '{}' is not a byte count", what, kv.key(), text));
  return v;
}

std::string external_bytes(const TensorProto& t, const std::string& base_dir, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = external_int(kv, what);
    else if (kv.key() == "length")
      length = external_int(kv, what);
  }
  if (location.empty()) throw Error(fmt::format("{}: external data without a location", what));
  if (location.find("..") != std::string::npos || location[0] == '/')
    throw Error(fmt::format("{}: external data location '{}' leaves the model's folder", what, location));
  std::string path = base_dir.empty() ? location : base_dir + "/" + location;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open external data file {}", what, path));
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  if (length < 0) length = size - offset;
  if (offset > size || length < 0 || length > size - offset)
    throw Error(fmt::format("{}: external data range exceeds {} ({} bytes)", what, path, size));
  std::string bytes(size_t(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  if (!in) throw Error(fmt::format("{}: cannot read external data file {}", what, path));
  return bytes;
}

}  // namespace

Tensor tensor_from_onnx(const TensorProto& t, const std::string& base_dir, const std::string& what) {
  auto dtype = dtype_from_onnx(t.data_type());
  if (!dtype)
    throw Error(fmt::format("{}: tensor data type {} ({}) is not supported", what,
                            TensorProto::DataType_Name(TensorProto::DataType(t.data_type())), t.data_type()));
  TensorType type{*dtype, Shape(t.dims().begin(), t.dims().end())};
  std::optional<int64_t> count = checked_num_elements(type.shape, dtype_size(*dtype));
  if (!count) throw Error(fmt::format("{}: invalid tensor dimensions {}", what, shape_str(type.shape)));
  const int64_t n = *count;
  const size_t nbytes = size_t(n) * dtype_size(*dtype);
  // Sizes are checked against the data present before the tensor is allocated.
  auto check_bytes = [&](size_t have, const char* kind) {
    if (have != nbytes)
      throw Error(fmt::format("{}: {} has {} bytes, {} needs {}", what, kind, have, type.str(), nbytes));
  };
  auto check_count = [&](int64_t have) {
    if (have != n)
      throw Error(fmt::format("{}: tensor {} holds {} values, expected {}", what, type.str(), have, n));
  };
  if (t.data_location() == TensorProto::EXTERNAL) {
    std::string bytes = external_bytes(t, base_dir, what);
    check_bytes(bytes.size(), "external data");
    Tensor out(type);
    copy_bytes(out.bytes.data(), bytes.data(), bytes.size());
    return out;
  }
  if (t.has_raw_data()) {
    check_bytes(t.raw_data().size(), "raw data");
    Tensor out(type);
    copy_bytes(out.bytes.data(), t.raw_data().data(), nbytes);
    return out;
  }
  switch (*dtype) {
    case DType::F32:
      check_count(t.float_data_size());
      break;
    case DType::F64:
      check_count(t.double_data_size());
      break;
    case DType::I64:
      check_count(t.int64_data_size());
      break;
    default:
      check_count(t.int32_data_size());
      break;
  }
  Tensor out(type);
  switch (*dtype) {
    case DType::F32:
      copy_bytes(out.bytes.data(), t.float_data().data(), out.bytes.size());
      break;
    case DType::F64:
      copy_bytes(out.bytes.data(), t.double_data().data(), out.bytes.size());
      break;
    case DType::I64:
      copy_bytes(out.bytes.data(), t.int64_data().data(), out.bytes.size());
      break;
    case DType::I32:
      copy_bytes(out.bytes.data(), t.int32_data().data(), out.bytes.size());
      break;
    case DType::I8:
    case DType::U8:
    case DType::Bool:
      for (int64_t i = 0; i < n; ++i) out.bytes[i] = uint8_t(t.int32_data(int(i)));
      break;
    case DType::F16:
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) out.data<uint16_t>()[i] = uint16_t(t.int32_data(int(i)));
      break;
  }
  return out;
}

void tensor_to_onnx(const Tensor& t, onnx::TensorProto* out) {
  out->set_data_type(dtype_to_onnx(t.type.dtype));
  out->clear_dims();
  for (int64_t d : t.type.shape) out->add_dims(d);
  out->set_raw_data(t.bytes.data(), t.bytes.size());
}

Tensor read_tensor_pb(const std::string& path, std::string* name) {
  std::string bytes = read_file(path);
  TensorProto t;
  if (!t.ParseFromString(bytes)) throw Error(fmt::format("{}: not a valid ONNX TensorProto", path));
  if (name) *name = t.name();
  return tensor_from_onnx(t, "", path);
}

}  // namespace dlc::frontend
