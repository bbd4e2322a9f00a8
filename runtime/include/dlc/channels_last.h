// Channels-last operands (cuDNN's NHWC). The integer attribute `channels_last` (default 0) of the
// convolution, pooling and batch normalization ops and their gradients says that each operand of
// rank 3 or more holds the channels-first tensor the op is defined on, (N, C, D1, …, Dk), with its
// dim 1 moved last: (N, D1, …, Dk, C). A convolution weight (M, C/group, K1, …, Kk) likewise is
// (M, K1, …, Kk, C/group), cuDNN's NHWC filter. Attributes (kernel_shape, pads, AveragePoolGrad's
// shape, …) keep their channels-first meaning, and operands of rank 1 (bias, scale, statistics)
// are unchanged. The layout pass sets it for CUDA plans (passes/channels_last.h); the CPU kernels
// run such a node on channels-first copies (runtime/cpu/channels_first.h).
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

#include "dlc/attributes.h"
#include "dlc/tensor.h"

namespace dlc {

/// Whether `op` (an op name, as in the IR and plans) may take `channels_last`.
inline bool takes_channels_last(std::string_view op) {
  static constexpr std::array<std::string_view, 9> kOps = {
      "Conv",        "ConvTranspose",   "ConvGradFilter",     "MaxPool",      "MaxPoolGrad",
      "AveragePool", "AveragePoolGrad", "BatchNormalization", "BatchNormGrad"};
  return std::find(kOps.begin(), kOps.end(), op) != kOps.end();
}

/// Whether a node's or step's attributes ask for channels-last operands.
inline bool is_channels_last(const Attrs& attrs) { return attrs.i("channels_last", 0) != 0; }

/// Whether an operand of `rank` has a channel layout (rank 3 or more).
inline bool has_channel_layout(size_t rank) { return rank >= 3; }

/// The Transpose permutation from channels-first to channels-last: [0, 2, …, rank-1, 1].
inline Shape to_channels_last_perm(size_t rank) {
  Shape p = {0};
  for (size_t d = 2; d < rank; ++d) p.push_back(int64_t(d));
  p.push_back(1);
  return p;
}

/// The inverse: [0, rank-1, 1, …, rank-2].
inline Shape to_channels_first_perm(size_t rank) {
  Shape p = {0, int64_t(rank) - 1};
  for (size_t d = 1; d + 1 < rank; ++d) p.push_back(int64_t(d));
  return p;
}

/// `dims` permuted as a Transpose by `perm` permutes them: out[i] = dims[perm[i]].
inline Shape permuted(const Shape& dims, const Shape& perm) {
  Shape out;
  for (int64_t p : perm) out.push_back(dims[size_t(p)]);
  return out;
}

/// A channels-last operand's channels-first dims (others unchanged).
inline Shape channels_first_dims(const Shape& dims) {
  return has_channel_layout(dims.size()) ? permuted(dims, to_channels_first_perm(dims.size())) : dims;
}

/// A channels-first operand's channels-last dims (others unchanged).
inline Shape channels_last_dims(const Shape& dims) {
  return has_channel_layout(dims.size()) ? permuted(dims, to_channels_last_perm(dims.size())) : dims;
}

}  // namespace dlc
