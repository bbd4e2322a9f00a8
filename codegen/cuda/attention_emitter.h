// Attention forward and backward (ir/ops/nn.def, grad.def) as tensor-core kernels in the manner
// of FlashAttention: the S x Sk scores live in shared memory one 64-key tile at a time, never in
// global memory. q [groups, rows, depth], k [groups, keys, depth], v [groups, keys, value_depth]
// (or seq-major: q [groups / heads, rows, heads, depth] and so on, dlc/attention.h), f16 or bf16 (WMMA
// 16x16x16 fragments, f32 accumulation); depth and value_depth multiples of 16 up to 128. Each block has 4
// warps of 16 rows (or keys).
//
// Entries:  forward   _fwd (q, k, v, o, lse?): one pass over the key tiles with an online
//                     softmax (FlashAttention-2: o and the row sum rescaled as the row max
//                     grows; one score GEMM per tile)
//           backward  _delta (dout, o, workspace): D = Σ dout·o per row, to the workspace (f32),
//                     and the row's query gradient sums there set to 0
//                     _dkdv (q, k, v, dout, lse, workspace, dk, dv): per key tile, over all rows;
//                     adds the tile's share of the query gradients to the sums (atomics)
//                     _dq (workspace, dq): dq = scale times the sums, in q's layout and type
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct AttentionSpec {
  DType dtype = DType::BF16;
  int64_t groups = 1, rows = 1, keys = 1, depth = 64, value_depth = 64;
  double scale = 1.0;
  bool causal = false;  // row i reads keys j <= i only (tiles past the diagonal are skipped)
  // Seq-major operands: `heads` groups interleave in each row (AttentionShape::offset); lse is
  // [groups, rows] either way.
  bool seq_major = false;
  int64_t heads = 1;
};

/// The dims of `spec`'s operands of `count` rows (rows or keys) `width` wide, [groups, count,
/// width] or seq-major [groups / heads, count, heads, width], and of its lse.
Shape attention_operand_dims(const AttentionSpec& spec, int64_t count, int64_t width);
Shape attention_lse_dims(const AttentionSpec& spec);

KernelSource emit_attention_forward(const AttentionSpec& spec);
KernelSource emit_attention_backward(const AttentionSpec& spec);

}  // namespace dlc::codegen::cuda
