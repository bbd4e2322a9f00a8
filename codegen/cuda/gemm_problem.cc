// Row-major MatMul -> column-major cuBLASLt GEMM (gemm_problem.h).
#include "codegen/cuda/gemm_problem.h"

#include <fmt/format.h>

#include "dlc/error.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

namespace {

// A stored operand: its batch dims and its last two dims (a vector becomes a one-row or one-column
// matrix, as numpy's matmul treats it).
struct StoredMatrix {
  Shape batch;
  int64_t r0 = 1, r1 = 1;
};

StoredMatrix stored(const Shape& dims, bool vector_is_row) {
  StoredMatrix s;
  if (dims.size() == 1) {
    (vector_is_row ? s.r1 : s.r0) = dims[0];
    return s;
  }
  s.batch.assign(dims.begin(), dims.end() - 2);
  s.r0 = dims[dims.size() - 2];
  s.r1 = dims.back();
  return s;
}

GemmMatrix column_major(const StoredMatrix& s, bool transpose) {
  return GemmMatrix{s.r1, s.r0, s.r1, s.r0 * s.r1, transpose};
}

}  // namespace

GemmProblem gemm_problem(const Attrs& params, const std::string& what) {
  const bool ta = params.i("transpose_a", 0) != 0, tb = params.i("transpose_b", 0) != 0;
  StoredMatrix a = stored(params.ints("input0_dims"), true), b = stored(params.ints("input1_dims"), false);
  const int64_t batch_a = num_elements(a.batch), batch_b = num_elements(b.batch);
  const int64_t m_rows = ta ? a.r1 : a.r0, k = ta ? a.r0 : a.r1, n_cols = tb ? b.r0 : b.r1;
  if ((tb ? b.r1 : b.r0) != k) throw Error(fmt::format("{}: inner dimensions differ", what));

  const int64_t out_numel = num_elements(params.ints("output0_dims"));
  const int64_t batch = m_rows * n_cols != 0 ? out_numel / (m_rows * n_cols) : 0;
  if ((batch_a != batch && batch_a != 1) || (batch_b != batch && batch_b != 1))
    throw Error(fmt::format("{}: batch dims {} and {} are neither equal nor one-sided", what,
                            shape_str(a.batch), shape_str(b.batch)));
  GemmProblem p;
  p.k = k;
  p.m = n_cols;
  p.n = m_rows;
  p.batch = batch;
  if (batch_b == 1 && batch > 1 && !ta) {  // A's batch is more rows of one GEMM
    a.r0 *= batch;
    p.n *= batch;
    p.batch = 1;
  }
  p.first = column_major(b, tb);
  p.second = column_major(a, ta);
  if (batch_b == 1) p.first.batch_stride = 0;
  if (batch_a == 1) p.second.batch_stride = 0;
  p.d = GemmMatrix{p.m, p.n, p.m, p.m * p.n, false};
  if (p.m * p.n * p.batch != out_numel)
    throw Error(fmt::format("{}: the result {} is not {} GEMMs of {} x {}", what,
                            shape_str(params.ints("output0_dims")), p.batch, p.n, p.m));
  return p;
}

}  // namespace dlc::codegen::cuda
