// Floating-point elements of host memory read and written as float, whatever their storage type
// (f32, f16, bf16): what the emulated cuBLASLt and cuDNN (emulated_cublaslt.cc, emulated_cudnn.cc)
// compute with, accumulating in f32 as the libraries do.
#pragma once

#include <cstdint>

#include "dlc/dtype.h"
#include "dlc/half.h"

namespace dlc::emulation {

inline float load_element(DType type, const void* base, int64_t i) {
  switch (type) {
    case DType::F16:
      return float(static_cast<const Half*>(base)[i]);
    case DType::BF16:
      return float(static_cast<const BFloat16*>(base)[i]);
    default:
      return static_cast<const float*>(base)[i];
  }
}

inline void store_element(DType type, void* base, int64_t i, float value) {
  switch (type) {
    case DType::F16:
      static_cast<Half*>(base)[i] = Half(value);
      break;
    case DType::BF16:
      static_cast<BFloat16*>(base)[i] = BFloat16(value);
      break;
    default:
      static_cast<float*>(base)[i] = value;
  }
}

}  // namespace dlc::emulation
