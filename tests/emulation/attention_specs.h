// The attention problems whose emitted CUDA kernels run emulated (cuda_shim.h): partial tiles with
// two head sizes, a one-row case, square tiles in f16, the largest head size, causal ones, and
// seq-major ones (the heads interleaved in each row).
#pragma once

#include "codegen/cuda/attention_emitter.h"

namespace dlc::emulation {

// dtype, groups, rows, keys, depth, value_depth, scale, causal, seq_major, heads
inline const codegen::cuda::AttentionSpec kAttentionSpecs[] = {
    {DType::BF16, 3, 100, 77, 32, 48, 0.3, false, false, 1},
    {DType::F16, 4, 1, 5, 16, 16, 0.5, false, false, 1},
    {DType::F16, 2, 128, 130, 64, 64, 0.125, false, false, 1},
    {DType::BF16, 1, 64, 64, 128, 128, 0.09, false, false, 1},
    // Causal: several tiles of keys (the ones past the diagonal skipped), more rows than keys.
    {DType::BF16, 2, 150, 150, 32, 32, 0.2, true, false, 1},
    {DType::F16, 1, 100, 70, 16, 32, 0.5, true, false, 1},
    // Seq-major: a batch of 2 with 3 heads and partial tiles; a causal one with 2 heads.
    {DType::BF16, 6, 100, 77, 32, 48, 0.3, false, true, 3},
    {DType::F16, 4, 70, 70, 64, 64, 0.125, true, true, 2},
};

}  // namespace dlc::emulation
