// cuBLASLt GEMM calls (cublaslt_matmul.h).
#include "runtime/cuda/cublaslt_matmul.h"

#include <fmt/format.h>

#include <cstring>

#include "dlc/dtype.h"
#include "dlc/error.h"
#include "runtime/cuda/check.h"
#include "runtime/plan/buffer_alignment.h"

namespace dlc::cuda {

using codegen::cuda::gemm_problem;
using codegen::cuda::GemmMatrix;
using codegen::cuda::GemmProblem;

namespace {

cudaDataType_t cuda_data_type(const std::string& dtype, const std::string& what) {
  if (dtype == "f32") return CUDA_R_32F;
  if (dtype == "f16") return CUDA_R_16F;
  if (dtype == "bf16") return CUDA_R_16BF;
  throw Error(fmt::format("{}: cuBLASLt GEMMs of {} are not supported (f32, f16, bf16)", what, dtype));
}

cublasLtEpilogue_t epilogue_of(const std::string& name, const std::string& what) {
  if (name == "default") return CUBLASLT_EPILOGUE_DEFAULT;
  if (name == "bias") return CUBLASLT_EPILOGUE_BIAS;
  if (name == "relu") return CUBLASLT_EPILOGUE_RELU;
  if (name == "bias_relu") return CUBLASLT_EPILOGUE_RELU_BIAS;
  throw Error(fmt::format("{}: unknown GEMM epilogue '{}'", what, name));
}

template <typename T>
void set(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value) {
  DLC_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof(value)));
}

CublasLtMatmul::Layout layout(cudaDataType_t type, const GemmMatrix& m, int64_t batch) {
  CublasLtMatmul::Layout l;
  DLC_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(l.out(), type, uint64_t(m.rows), uint64_t(m.cols), m.ld));
  if (batch > 1) {
    const int32_t count = int32_t(batch);
    DLC_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(l.get(), CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    DLC_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(l.get(), CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                      &m.batch_stride, sizeof(m.batch_stride)));
  }
  return l;
}

std::string problem_key(const std::string& dtype, const GemmProblem& p, const std::string& epilogue,
                        double beta) {
  auto matrix = [](const GemmMatrix& m) {
    return fmt::format("{}x{}/{}/{}{}", m.rows, m.cols, m.ld, m.batch_stride, m.transpose ? "T" : "N");
  };
  return fmt::format("{} m{} n{} k{} b{} {} {} {} {} beta{}", dtype, p.m, p.n, p.k, p.batch, matrix(p.first),
                     matrix(p.second), matrix(p.d), epilogue, beta);
}

}  // namespace

CublasLtMatmul::CublasLtMatmul(LibraryHandles& handles, const Attrs& params, const std::string& what)
    : handle_(handles.cublaslt()), workspace_bytes_(kCublasLtWorkspaceBytes) {
  const std::string dtype = params.s("dtype");
  const cudaDataType_t type = cuda_data_type(dtype, what);
  const GemmProblem p = gemm_problem(params, what);
  const std::string epilogue = params.s("epilogue", "default");
  alpha_ = float(params.f("alpha", 1.0));
  beta_ = float(params.f("beta", 0.0));
  bias_ = epilogue == "bias" || epilogue == "bias_relu";

  DLC_CUBLAS_CHECK(cublasLtMatmulDescCreate(desc_.out(), CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSA, p.first.transpose ? CUBLAS_OP_T : CUBLAS_OP_N);
  set(desc_.get(), CUBLASLT_MATMUL_DESC_TRANSB, p.second.transpose ? CUBLAS_OP_T : CUBLAS_OP_N);
  set(desc_.get(), CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue_of(epilogue, what));
  if (bias_) {
    set(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, type);
    set(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, int64_t(0));  // one bias for every batch
  }
  first_ = layout(type, p.first, p.batch);
  second_ = layout(type, p.second, p.batch);
  d_ = layout(type, p.d, p.batch);

  const std::string key = problem_key(dtype, p, epilogue, beta_);
  std::string& cached = handles.algorithm_cache()["cublasLt " + key];
  if (cached.size() == sizeof(algo_)) {
    std::memcpy(&algo_, cached.data(), sizeof(algo_));
    return;
  }
  OwnedHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref;
  DLC_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(pref.out()));
  const uint64_t max_workspace = workspace_bytes_;
  DLC_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                        &max_workspace, sizeof(max_workspace)));
  // Operands are only as aligned as plan buffers are (the default assumes 256 bytes and may pick an
  // algorithm that needs it).
  const uint32_t alignment = uint32_t(plan::kBufferAlignment);
  for (const cublasLtMatmulPreferenceAttributes_t attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    DLC_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), attr, &alignment, sizeof(alignment)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  DLC_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle_, desc_.get(), first_.get(), second_.get(), d_.get(),
                                                  d_.get(), pref.get(), 1, &result, &found));
  if (found == 0) throw Error(fmt::format("{}: cuBLASLt has no algorithm for {}", what, key));
  algo_ = result.algo;
  cached.assign(reinterpret_cast<const char*>(&algo_), sizeof(algo_));
}

void CublasLtMatmul::run(const LibraryOperands& o, void* workspace, cudaStream_t stream) const {
  const void *a = o.input(0), *b = o.input(1), *bias = o.input(2), *residual = o.input(3);
  void* d = o.output(0);
  if (bias_) set(desc_.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
  // cuBLASLt's first operand is the step's B, its second the step's A (gemm_problem.h); with
  // beta = 0 matrix C is not read, and D stands in for it.
  DLC_CUBLAS_CHECK(cublasLtMatmul(handle_, desc_.get(), &alpha_, b, first_.get(), a, second_.get(), &beta_,
                                  residual ? residual : d, d_.get(), d, d_.get(), &algo_, workspace,
                                  workspace_bytes_, stream));
}

}  // namespace dlc::cuda
