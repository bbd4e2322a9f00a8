// A plan's MatMul (row-major, numpy batching, optional transposes) as the column-major GEMM
// cuBLASLt computes. Row-major D[M, N] = op(A) op(B) is column-major D^T = op(B)^T op(A)^T, so
// cuBLASLt's first operand is the step's B and its second the step's A, each stored matrix read
// as its column-major transpose: a row-major [r0, r1] matrix is a column-major r1 x r0 one with
// leading dimension r1, and a transpose flag carries over as the operation. Pure arithmetic, so it
// is tested without a GPU.
#pragma once

#include <cstdint>

#include "dlc/attributes.h"

namespace dlc::codegen::cuda {

/// One stored column-major matrix: rows x cols, leading dimension ld, batch stride in elements
/// (0: every batch reads the same matrix).
struct GemmMatrix {
  int64_t rows = 0, cols = 0, ld = 0, batch_stride = 0;
  bool transpose = false;  // the operation applied to it
};

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;  // column-major: D (m x n) = op(first) (m x k) op(second) (k x n)
  int64_t batch = 1;
  GemmMatrix first;   // the step's input 1 (B)
  GemmMatrix second;  // the step's input 0 (A)
  GemmMatrix d;       // the result (and a residual, which has its layout)
};

/// The GEMM of a `cublasLt.matmul` step from its recorded parameters (input0_dims, input1_dims,
/// output0_dims, transpose_a, transpose_b). A batch of B with one matrix folds into A's rows (one
/// larger GEMM) when A is not transposed. Throws dlc::Error naming `what` for batch dimensions that
/// are neither equal nor one-sided (a partial broadcast).
GemmProblem gemm_problem(const Attrs& params, const std::string& what);

}  // namespace dlc::codegen::cuda
