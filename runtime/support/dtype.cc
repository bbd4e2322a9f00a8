// Tables behind dlc/dtype.h and the half-precision conversions of dlc/half.h.
#include "dlc/dtype.h"

#include "dlc/half.h"

namespace dlc {

size_t dtype_size(DType t) {
  switch (t) {
#define DLC_DTYPE_SIZE(e, name, size) \
  case DType::e:                      \
    return size;
    DLC_DTYPES(DLC_DTYPE_SIZE)
#undef DLC_DTYPE_SIZE
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
#define DLC_DTYPE_NAME(e, name, size) \
  case DType::e:                      \
    return name;
    DLC_DTYPES(DLC_DTYPE_NAME)
#undef DLC_DTYPE_NAME
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view n) {
#define DLC_DTYPE_PARSE(e, name, size) \
  if (n == name) return DType::e;
  DLC_DTYPES(DLC_DTYPE_PARSE)
#undef DLC_DTYPE_PARSE
  return std::nullopt;
}

uint16_t Half::from_float(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0));
  if (mag >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflow to inf
  if (mag < 0x38800000u) {                                  // subnormal or zero
    if (mag < 0x33000000u) return uint16_t(sign);
    uint32_t e = mag >> 23;
    uint32_t m = (mag & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - e;  // 14..24
    uint32_t r = m >> (shift - 1 + 1);
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return uint16_t(sign | r);
  }
  uint32_t r = mag - 0x38000000u;  // rebias exponent 127 -> 15
  uint32_t out = r >> 13;
  uint32_t rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (out & 1u))) ++out;
  return uint16_t(sign | out);
}

float Half::to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu;
  uint32_t m = h & 0x3ffu;
  uint32_t out;
  if (e == 0) {
    if (m == 0) {
      out = sign;
    } else {  // subnormal: normalize
      int k = -1;
      do {
        ++k;
        m <<= 1;
      } while (!(m & 0x400u));
      out = sign | ((uint32_t(127 - 15 - k) << 23)) | ((m & 0x3ffu) << 13);
    }
  } else if (e == 31) {
    out = sign | 0x7f800000u | (m << 13);
  } else {
    out = sign | ((e + 112) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

}  // namespace dlc
