// Embedding lookup and its gradient: rows of a table [vocab, dim] gathered by integer indices
// (the IR's Gather on axis 0), and the backward's scatter-add of the output gradient into a zeroed
// table gradient (GatherGrad; repeated indices add up, through f32 atomicAdd). Gather on axis k is
// the same on [outer, vocab, dim] (outer: the dims before k), each of the outer blocks gathered
// alike: out [outer, indices, dim]. Negative indices
// count from the end as in ONNX; indices outside [-vocab, vocab) read zeros and are skipped by the
// backward (the CPU kernels report an error instead).
//
// Entries:
//   gather   (weight, indices, out)                    4 elements a thread when dim % 4 == 0
//   backward f32:      [zero](dtable) [scatter](dy, indices, dtable)
//            f16/bf16: [zero](workspace) [scatter](dy, indices, workspace)
//                      [cast](workspace, dtable)       (accumulates in an f32 workspace)
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/attributes.h"
#include "dlc/dtype.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct EmbeddingSpec {
  DType dtype = DType::F32;        // weight, out, dy, dtable
  DType index_dtype = DType::I64;  // i64 or i32
  int64_t vocab = 1, dim = 1;
  int64_t indices = 1;  // number of indices (their shape flattened)
  int64_t outer = 1;    // Gather on axis k > 0: the product of the table's dims before k
};

/// The spec of Gather (or GatherGrad) with attribute axis on `table` (GatherGrad: its result) and
/// `indices`. Throws dlc::Error for an axis out of range or a table empty on it.
EmbeddingSpec gather_spec(const Attrs& attrs, const TensorType& table, const TensorType& indices);

KernelSource emit_embedding_gather(const EmbeddingSpec& spec);
KernelSource emit_embedding_backward(const EmbeddingSpec& spec);

}  // namespace dlc::codegen::cuda
