// A channels-first tensor [N, C, d1, ...] seen as (batch, channels, spatial): the view of the
// normalization kernels and of the per-position cross-entropy.
#pragma once

#include <cstdint>

#include "dlc/tensor.h"

namespace dlc::cpu {

struct ChannelDims {
  int64_t n, c, spatial;  // spatial: the product of d1, ... (1 for [N, C])
};

/// `dims` has rank 2 or more.
inline ChannelDims channel_dims(const Shape& dims) {
  int64_t spatial = 1;
  for (size_t d = 2; d < dims.size(); ++d) spatial *= dims[d];
  return {dims[0], dims[1], spatial};
}

}  // namespace dlc::cpu
