// Error checks for calls into CUDA libraries. Each macro evaluates its statement once and, when
// the returned status is not success, throws dlc::Error naming the statement text, the library's
// own error name and text, and the file and line:
//
//   DLC_CUDA_CHECK(cudaMalloc(&p, bytes));      // CUDA runtime (cudaError_t)
//   DLC_CU_CHECK(cuCtxSynchronize());           // CUDA driver (CUresult)
//   DLC_NVRTC_CHECK(nvrtcCompileProgram(…));    // NVRTC (nvrtcResult)
//   DLC_CUBLAS_CHECK(cublasLtMatmul(…));        // cuBLAS / cuBLASLt (cublasStatus_t)
//   DLC_CUDNN_CHECK(cudnnBackendExecute(…));    // cuDNN (cudnnStatus_t)
//
// dlc does not link libcuda: its stub has the SONAME libcuda.so.1, which machines without an
// NVIDIA driver lack, and a program linked to it would not even start there. Driver entry points
// (including the error strings DLC_CU_CHECK prints) are resolved through the CUDA runtime.
// The cuBLAS and cuDNN checks call those libraries' error-string functions: a file that uses them
// links the library, as it does anyway for the call it checks.
#pragma once

#include <cublas_api.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <string>

#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define DLC_HAVE_CUDNN_HEADER 1
#endif

#include "dlc/error.h"

namespace dlc::cuda {

/// Throws dlc::Error "LIBRARY error: STATEMENT failed with ERROR at FILE:LINE".
[[noreturn]] void throw_cuda_error(const char* library, const char* statement, const std::string& error,
                                   const char* file, int line);

/// "NAME (description)" of each library's status codes.
std::string describe_status(cudaError_t status);
std::string describe_status(CUresult status);  // through the runtime; "CUresult N" without a driver
std::string describe_status(nvrtcResult status);

inline std::string describe_status(cublasStatus_t status) {
  return std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")";
}

#if DLC_HAVE_CUDNN_HEADER
inline std::string describe_status(cudnnStatus_t status) { return cudnnGetErrorString(status); }
#endif

}  // namespace dlc::cuda

#define DLC_DETAIL_CUDA_LIB_CHECK(library, success, statement)                                            \
  do {                                                                                                    \
    const auto dlc_check_status_ = (statement);                                                           \
    if (dlc_check_status_ != (success))                                                                   \
      ::dlc::cuda::throw_cuda_error(library, #statement, ::dlc::cuda::describe_status(dlc_check_status_), \
                                    __FILE__, __LINE__);                                                  \
  } while (0)

#define DLC_CUDA_CHECK(statement) DLC_DETAIL_CUDA_LIB_CHECK("CUDA runtime", cudaSuccess, statement)
#define DLC_CU_CHECK(statement) DLC_DETAIL_CUDA_LIB_CHECK("CUDA driver", CUDA_SUCCESS, statement)
#define DLC_NVRTC_CHECK(statement) DLC_DETAIL_CUDA_LIB_CHECK("NVRTC", NVRTC_SUCCESS, statement)
#define DLC_CUBLAS_CHECK(statement) DLC_DETAIL_CUDA_LIB_CHECK("cuBLAS", CUBLAS_STATUS_SUCCESS, statement)
#define DLC_CUDNN_CHECK(statement) DLC_DETAIL_CUDA_LIB_CHECK("cuDNN", CUDNN_STATUS_SUCCESS, statement)
