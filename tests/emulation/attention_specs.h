// The attention problems whose emitted CUDA kernels run emulated (cuda_shim.h): partial tiles with
// two head sizes, a one-row case, square tiles in f16, and the largest head size.
#pragma once

#include "codegen/cuda/attention_emitter.h"

namespace dlc::emulation {

inline const codegen::cuda::AttentionSpec kAttentionSpecs[] = {
    {DType::BF16, 3, 100, 77, 32, 48, 0.3},
    {DType::F16, 4, 1, 5, 16, 16, 0.5},
    {DType::F16, 2, 128, 130, 64, 64, 0.125},
    {DType::BF16, 1, 64, 64, 128, 128, 0.09},
};

}  // namespace dlc::emulation
