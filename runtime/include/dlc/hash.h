// A stable 64-bit hash (FNV-1a) for cache keys and generated names: unlike std::hash it gives the
// same value in every run, build and machine, so it may name files and kernels.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dlc {

/// FNV-1a over `bytes`, continuing from `h` (pass the result of an earlier call to chain parts).
inline uint64_t fnv1a64(std::string_view bytes, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// `h` as 16 lowercase hex digits.
inline std::string hex64(uint64_t h) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[size_t(i)] = kDigits[h & 15];
  return s;
}

}  // namespace dlc
