// Static tensor types (dtype + concrete dims) and host tensor values: the value types shared by
// the IR, the plan format, the runtime API and the data readers.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dlc/dtype.h"

namespace dlc {

/// memcpy that accepts empty ranges with null pointers (an empty tensor's data() may be null).
inline void copy_bytes(void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

using Shape = std::vector<int64_t>;

int64_t num_elements(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2,3]"

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;

  int64_t rank() const { return int64_t(shape.size()); }
  int64_t numel() const { return num_elements(shape); }
  size_t bytes() const { return size_t(numel()) * dtype_size(dtype); }
  bool operator==(const TensorType&) const = default;
  std::string str() const;  // "f32[2,3]"
};

/// A tensor value on the host: type plus raw little-endian bytes, row-major.
struct Tensor {
  TensorType type;
  std::vector<uint8_t> bytes;

  Tensor() = default;
  explicit Tensor(TensorType t) : type(std::move(t)), bytes(type.bytes()) {}
  /// Same type and the same bytes (so NaNs compare by bit pattern, +0 differs from -0).
  bool operator==(const Tensor&) const = default;

  template <typename T>
  T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }

  /// Elements widened to int64 (integer and bool dtypes) or double (float dtypes).
  std::vector<int64_t> as_int64() const;
  std::vector<double> as_double() const;

  static Tensor scalar_f32(float v, const Shape& shape = {});
  static Tensor from_int64(const std::vector<int64_t>& v, const Shape& shape);
  static Tensor from_double(DType dtype, const std::vector<double>& v, const Shape& shape);
};

}  // namespace dlc
