// Helpers of dlc/tensor.h.
#include "dlc/tensor.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "dlc/half.h"

namespace dlc {

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

std::string TensorType::str() const { return fmt::format("{}{}", dtype_name(dtype), shape_str(shape)); }

namespace {
template <typename Out, typename F>
std::vector<Out> convert(const Tensor& t, F&& cast) {
  int64_t n = t.type.numel();
  std::vector<Out> out(static_cast<size_t>(n));
  const uint8_t* p = t.bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.type.dtype) {
      case DType::F32: out[i] = cast(reinterpret_cast<const float*>(p)[i]); break;
      case DType::F64: out[i] = cast(reinterpret_cast<const double*>(p)[i]); break;
      case DType::F16: out[i] = cast(Half::to_float(reinterpret_cast<const uint16_t*>(p)[i])); break;
      case DType::BF16: {
        BFloat16 b;
        b.bits = reinterpret_cast<const uint16_t*>(p)[i];
        out[i] = cast(float(b));
        break;
      }
      case DType::I64: out[i] = cast(reinterpret_cast<const int64_t*>(p)[i]); break;
      case DType::I32: out[i] = cast(reinterpret_cast<const int32_t*>(p)[i]); break;
      case DType::I8: out[i] = cast(reinterpret_cast<const int8_t*>(p)[i]); break;
      case DType::U8: out[i] = cast(p[i]); break;
      case DType::Bool: out[i] = cast(p[i] != 0); break;
    }
  }
  return out;
}
}  // namespace

std::vector<int64_t> Tensor::as_int64() const {
  return convert<int64_t>(*this, [](auto v) { return static_cast<int64_t>(v); });
}

std::vector<double> Tensor::as_double() const {
  return convert<double>(*this, [](auto v) { return static_cast<double>(v); });
}

Tensor Tensor::scalar_f32(float v, const Shape& shape) {
  Tensor t(TensorType{DType::F32, shape});
  for (int64_t i = 0; i < t.type.numel(); ++i) t.data<float>()[i] = v;
  return t;
}

Tensor Tensor::from_int64(const std::vector<int64_t>& v, const Shape& shape) {
  Tensor t(TensorType{DType::I64, shape});
  if (int64_t(v.size()) != t.type.numel()) throw Error("internal: from_int64 size mismatch");
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

Tensor Tensor::from_double(DType dtype, const std::vector<double>& v, const Shape& shape) {
  Tensor t(TensorType{dtype, shape});
  if (int64_t(v.size()) != t.type.numel()) throw Error("internal: from_double size mismatch");
  for (size_t i = 0; i < v.size(); ++i) {
    switch (dtype) {
      case DType::F32: t.data<float>()[i] = float(v[i]); break;
      case DType::F64: t.data<double>()[i] = v[i]; break;
      case DType::F16: t.data<uint16_t>()[i] = Half::from_float(float(v[i])); break;
      case DType::BF16: t.data<uint16_t>()[i] = BFloat16::from_float(float(v[i])); break;
      case DType::I64: t.data<int64_t>()[i] = int64_t(v[i]); break;
      case DType::I32: t.data<int32_t>()[i] = int32_t(v[i]); break;
      case DType::I8: t.data<int8_t>()[i] = int8_t(v[i]); break;
      case DType::U8: t.data<uint8_t>()[i] = uint8_t(v[i]); break;
      case DType::Bool: t.data<uint8_t>()[i] = v[i] != 0; break;
    }
  }
  return t;
}

}  // namespace dlc
