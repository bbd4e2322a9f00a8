// Element types of tensors, shared by the IR, the plan format and the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace dlc {

// X(enumerator, text name, size in bytes)
#define DLC_DTYPES(X) \
  X(F32, "f32", 4)    \
  X(F16, "f16", 2)    \
  X(BF16, "bf16", 2)  \
  X(F64, "f64", 8)    \
  X(I64, "i64", 8)    \
  X(I32, "i32", 4)    \
  X(I8, "i8", 1)      \
  X(U8, "u8", 1)      \
  X(Bool, "bool", 1)

enum class DType : uint8_t {
#define DLC_DTYPE_ENUM(e, name, size) e,
  DLC_DTYPES(DLC_DTYPE_ENUM)
#undef DLC_DTYPE_ENUM
};

/// Size of one element in bytes.
size_t dtype_size(DType t);
/// Short text name ("f32", "i64", …) used by the textual IR and messages.
std::string_view dtype_name(DType t);
/// Inverse of dtype_name.
std::optional<DType> parse_dtype(std::string_view name);

inline bool is_floating(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
/// The 16-bit floats (f16, bf16): stored narrow, computed in f32.
inline bool is_half(DType t) { return t == DType::F16 || t == DType::BF16; }
/// Whether converting a `from` float to `to` is exact (a wider float: half to f32 or f64, f32 to
/// f64), so converting the result back gives the same bits.
inline bool is_exact_widening(DType from, DType to) {
  return (is_half(from) && (to == DType::F32 || to == DType::F64)) ||
         (from == DType::F32 && to == DType::F64);
}
inline bool is_integer(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I8 || t == DType::U8;
}

}  // namespace dlc
