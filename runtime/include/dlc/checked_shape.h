// Size checks for shapes read from files (models, plans, .npy), done before anything is
// allocated, so that a corrupt dimension is an error rather than an overflow or a huge allocation.
#pragma once

#include <cstdint>
#include <optional>

#include "dlc/tensor.h"

namespace dlc {

/// The number of elements of `shape` if every dim is >= 0 and the byte size (elements ×
/// `element_size`) fits in int64; nullopt otherwise.
inline std::optional<int64_t> checked_num_elements(const Shape& shape, size_t element_size = 1) {
  int64_t n = 1, bytes = int64_t(element_size);
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || __builtin_mul_overflow(bytes, d, &bytes))
      return std::nullopt;
  return n;
}

}  // namespace dlc
