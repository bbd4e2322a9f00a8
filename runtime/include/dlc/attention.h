// The Attention op's problem (ir/ops/nn.def) as its kernels and the op count see it, from the
// operands' dims and the op's seq_major attribute: q [groups..., rows, depth], k [groups..., keys,
// depth], v [groups..., keys, value_depth], or with seq_major = 1 q [batch..., rows, heads, depth]
// and so on (the heads inside each row: the layout the projections make, read without the head
// Transposes); and what the CUDA kernels take (codegen/cuda/attention_emitter.h), for the fusion
// pass to fuse by default only what they run: head sizes that are multiples of 16 up to 128.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dlc/attributes.h"
#include "dlc/tensor.h"

namespace dlc {

struct AttentionShape {
  int64_t groups = 1, rows = 1, keys = 1, depth = 1, value_depth = 1;
  int64_t heads = 1;       // with seq_major: the heads a row holds (groups = batch x heads)
  bool seq_major = false;  // operands [..., S, H, D] rather than [..., H, S, D]

  int64_t scores() const { return groups * rows * keys; }
  /// The keys row `row` reads, [0, keys_of(row, causal)): all, or those up to the row's own.
  int64_t keys_of(int64_t row, bool causal) const { return causal ? std::min(keys, row + 1) : keys; }
  /// Where row i of group g starts in an operand of `count` rows (rows or keys) `width` wide.
  int64_t offset(int64_t g, int64_t i, int64_t count, int64_t width) const {
    return seq_major ? ((g / heads * count + i) * heads + g % heads) * width : (g * count + i) * width;
  }
};

/// Whether Attention or AttentionGrad with these attributes has seq-major operands.
inline bool attention_seq_major(const Attrs& attrs) { return attrs.i("seq_major", 0) != 0; }

/// The problem of q, k and v of the dims given (already checked by shape inference) for an op
/// with attributes `attrs`.
inline AttentionShape attention_shape(const Shape& q, const Shape& k, const Shape& v, const Attrs& attrs) {
  const size_t r = q.size();
  AttentionShape s;
  s.seq_major = attention_seq_major(attrs);
  const size_t seq = s.seq_major ? r - 3 : r - 2;  // the rows' axis
  s.rows = q[seq];
  s.keys = k[seq];
  s.depth = q[r - 1];
  s.value_depth = v[r - 1];
  s.heads = s.seq_major ? q[r - 2] : 1;
  s.groups = s.heads;
  for (size_t i = 0; i < seq; ++i) s.groups *= q[i];
  return s;
}

inline constexpr int64_t kCudaAttentionMaxHeadSize = 128;

inline bool cuda_attention_head_size(int64_t d) {
  return d >= 16 && d <= kCudaAttentionMaxHeadSize && d % 16 == 0;
}

}  // namespace dlc
