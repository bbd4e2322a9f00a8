// GatherElements: out[o] = data[o with its coordinate on `axis` replaced by indices[o]], one
// thread per output element (the output has the indices' shape). Negative indices count from the
// end as in ONNX; an index outside [-n, n) reads a zero (the CPU kernel reports an error instead).
// Any storage type for data (the bytes are copied); i32 or i64 indices.
//
// GatherElementsGrad (the backward): one thread per data-gradient element, summing in double and
// in index order the dy elements of its line whose index lands on it — the CPU kernel's sums, bit
// for bit, with no atomics, at the cost of reading the axis's indices for each element. An index
// out of range adds nowhere. f32, f16 or bf16.
//
// Entries: (in0 = data, in1 = indices, out0); the backward (in0 = dy, in1 = indices, out0 = dx).
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct GatherElementsSpec {
  DType dtype = DType::F32;        // data and out
  DType index_dtype = DType::I64;  // i32 or i64
  Shape data, out;                 // out: the indices' shape, no larger than data off the axis
  int64_t axis = 0;                // in [0, rank)
};

/// Throws dlc::Error for ranks that differ, an axis out of range, an output larger than the data
/// on another axis, or a dtype without a CUDA type.
KernelSource emit_gather_elements(const GatherElementsSpec& spec);
/// The backward of `spec` (dy has spec.out, dx spec.data); also throws for a non-float dtype.
KernelSource emit_gather_elements_backward(const GatherElementsSpec& spec);

}  // namespace dlc::codegen::cuda
