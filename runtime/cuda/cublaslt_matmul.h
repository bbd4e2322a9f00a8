// A plan's `cublasLt.matmul` step as one cuBLASLt call: the GEMM of gemm_problem.h with the
// recorded epilogue (bias, Relu), alpha, and beta = 1 over a residual as matrix C; f32, f16 or
// bf16 storage with f32 accumulation (CUBLAS_COMPUTE_32F, no TF32, as the CPU kernels). The
// algorithm is chosen once per distinct problem by cuBLASLt's heuristic and cached.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <map>
#include <string>

#include "dlc/attributes.h"
#include "runtime/cuda/gemm_problem.h"

namespace dlc::cuda {

/// Heuristic results by problem (dtype, shapes, transposes, epilogue), shared by a session's GEMMs.
using MatmulAlgoCache = std::map<std::string, cublasLtMatmulAlgo_t>;

class CublasLtMatmul {
 public:
  /// Builds the descriptors of the step whose parameters are `params` and picks its algorithm
  /// for `workspace_bytes` of scratch. Throws dlc::Error naming `what` (an integer dtype, a
  /// partial batch broadcast, no algorithm).
  CublasLtMatmul(cublasLtHandle_t handle, const Attrs& params, const std::string& what,
                 size_t workspace_bytes, MatmulAlgoCache& cache);
  ~CublasLtMatmul();
  CublasLtMatmul(const CublasLtMatmul&) = delete;
  CublasLtMatmul& operator=(const CublasLtMatmul&) = delete;

  /// D = act(alpha * A B + bias + residual) on `stream`; bias and residual may be null when the step
  /// has none.
  void run(const void* a, const void* b, const void* bias, const void* residual, void* d, void* workspace,
           cudaStream_t stream) const;

 private:
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t first_ = nullptr, second_ = nullptr, d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  float alpha_ = 1, beta_ = 0;
  bool bias_ = false;
  size_t workspace_bytes_ = 0;
};

}  // namespace dlc::cuda
