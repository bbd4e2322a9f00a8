// The Attention op's problem (ir/ops/nn.def) as its kernels and the op count see it, from the
// operands' dims: q [groups..., rows, depth], k [groups..., keys, depth], v [groups..., keys,
// value_depth]; and what the CUDA kernels take (codegen/cuda/attention_emitter.h), for the fusion
// pass to fuse by default only what they run: head sizes that are multiples of 16 up to 128.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dlc/tensor.h"

namespace dlc {

struct AttentionShape {
  int64_t groups = 1, rows = 1, keys = 1, depth = 1, value_depth = 1;

  int64_t scores() const { return groups * rows * keys; }
  /// The keys row `row` reads, [0, keys_of(row, causal)): all, or those up to the row's own.
  int64_t keys_of(int64_t row, bool causal) const { return causal ? std::min(keys, row + 1) : keys; }
};

/// The problem of q, k and v of the dims given (already checked by shape inference).
inline AttentionShape attention_shape(const Shape& q, const Shape& k, const Shape& v) {
  const size_t r = q.size();
  AttentionShape s{1, q[r - 2], k[r - 2], q[r - 1], v[r - 1]};
  for (size_t i = 0; i + 2 < r; ++i) s.groups *= q[i];
  return s;
}

inline constexpr int64_t kCudaAttentionMaxHeadSize = 128;

inline bool cuda_attention_head_size(int64_t d) {
  return d >= 16 && d <= kCudaAttentionMaxHeadSize && d % 16 == 0;
}

}  // namespace dlc
