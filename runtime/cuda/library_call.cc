// The library-call table and the session's library handles (library_call.h).
#include "runtime/cuda/library_call.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/library_call_form.h"
#include "dlc/error.h"
#include "runtime/cuda/check.h"
#include "runtime/cuda/cublaslt_matmul.h"
#include "runtime/cuda/kernel_launch.h"
#include "runtime/plan/plan_values.h"

#if DLC_HAVE_CUDNN
#include <cudnn.h>

#include "runtime/cuda/cudnn_calls.h"
#endif

namespace dlc::cuda {

LibraryOperands library_operands(const plan::Stage& stage, const plan::Step& step, uint8_t* arena) {
  LibraryOperands o;
  for (int32_t buffer : step.inputs()) o.inputs.push_back(buffer_address(stage, buffer, arena));
  for (int32_t buffer : step.outputs()) o.outputs.push_back(buffer_address(stage, buffer, arena));
  return o;
}

LibraryHandles::~LibraryHandles() {
  if (cublaslt_) cublasLtDestroy(cublaslt_);
#if DLC_HAVE_CUDNN
  if (cudnn_) cudnnDestroy(static_cast<cudnnHandle_t>(cudnn_));
#endif
}

cublasLtHandle_t LibraryHandles::cublaslt() {
  if (!cublaslt_) DLC_CUBLAS_CHECK(cublasLtCreate(&cublaslt_));
  return cublaslt_;
}

void* LibraryHandles::cudnn() {
#if DLC_HAVE_CUDNN
  if (!cudnn_) {
    cudnnHandle_t h = nullptr;
    DLC_CUDNN_CHECK(cudnnCreate(&h));
    cudnn_ = h;
    DLC_CUDNN_CHECK(cudnnSetStream(h, stream_));
  }
  return cudnn_;
#else
  throw Error("this dlc was built without cuDNN");
#endif
}

bool implements_library_call(const std::string& call) {
#if DLC_HAVE_CUDNN
  if (is_cudnn_call(call)) return true;
#endif
  return call == "cublasLt.matmul";
}

std::unique_ptr<LibraryCall> make_library_call(LibraryHandles& handles, const std::string& call,
                                               const Attrs& params, const std::string& what) {
  codegen::cuda::check_library_call(call, params, what);
  if (call == "cublasLt.matmul") return std::make_unique<CublasLtMatmul>(handles, params, what);
#if DLC_HAVE_CUDNN
  if (is_cudnn_call(call)) return make_cudnn_call(handles, call, params, what);
#endif
  throw Error(fmt::format("{} calls {}, which this CUDA runtime does not implement", what, call));
}

StageLibraryCalls make_library_calls(LibraryHandles& handles, const plan::Stage& stage) {
  StageLibraryCalls calls;
  for (const plan::Step& s : stage.steps()) {
    std::unique_ptr<LibraryCall> call;
    if (s.cuda().kind() == plan::CudaStep::LIBRARY) {
      const std::string what = fmt::format("step '{}'", s.name());
      call = make_library_call(handles, s.cuda().call(), plan::from_proto(s.cuda().params(), what), what);
      calls.workspace_bytes = std::max(calls.workspace_bytes, int64_t(call->workspace_bytes()));
    }
    calls.by_step.push_back(std::move(call));
  }
  return calls;
}

}  // namespace dlc::cuda
