// A plan's `cublasLt.matmul` step as one cuBLASLt call: the GEMM of gemm_problem.h with the
// recorded epilogue (bias, Relu), alpha, and beta = 1 over a residual as matrix C; f32, f16 or
// bf16 storage with f32 accumulation (CUBLAS_COMPUTE_32F, no TF32, as the CPU kernels). The
// algorithm is chosen once per distinct problem by cuBLASLt's heuristic and cached.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

#include "codegen/cuda/gemm_problem.h"
#include "dlc/attributes.h"
#include "runtime/cuda/library_call.h"
#include "runtime/cuda/owned_handle.h"

namespace dlc::cuda {

/// cuBLASLt's workspace: NVIDIA recommends 32 MiB on Hopper.
constexpr size_t kCublasLtWorkspaceBytes = size_t(32) << 20;

class CublasLtMatmul final : public LibraryCall {
 public:
  using Layout = OwnedHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;

  /// Builds the descriptors of the step whose parameters are `params` and picks its algorithm for
  /// kCublasLtWorkspaceBytes of scratch (cached per problem in `handles`). Throws dlc::Error naming
  /// `what` (an integer dtype, a partial batch broadcast, no algorithm).
  CublasLtMatmul(LibraryHandles& handles, const Attrs& params, const std::string& what);

  size_t workspace_bytes() const override { return workspace_bytes_; }
  /// D (output 0) = act(alpha * A B + bias + residual) of inputs A, B, bias?, residual?.
  void run(const LibraryOperands& operands, void* workspace, cudaStream_t stream) const override;

 private:
  cublasLtHandle_t handle_;
  OwnedHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> desc_;
  Layout first_, second_, d_;
  cublasLtMatmulAlgo_t algo_{};
  float alpha_ = 1, beta_ = 0;
  bool bias_ = false;
  size_t workspace_bytes_ = 0;
};

}  // namespace dlc::cuda
