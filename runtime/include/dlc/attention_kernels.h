// What the CUDA Attention kernels take (codegen/cuda/attention_emitter.h), for the fusion pass to
// fuse by default only what they run: f16 or bf16 operands (the tensor cores) and head sizes that
// are multiples of 16 up to 128.
#pragma once

#include <cstdint>

namespace dlc {

inline constexpr int64_t kCudaAttentionMaxHeadSize = 128;

inline bool cuda_attention_head_size(int64_t d) {
  return d >= 16 && d <= kCudaAttentionMaxHeadSize && d % 16 == 0;
}

}  // namespace dlc
