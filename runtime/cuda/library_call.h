// A plan's library-call step (cuBLASLt, cuDNN) made ready to run: built once when a session is
// created — descriptors, algorithm, the scratch it needs — and run with the step's operand
// addresses. make_library_call is the table from a CudaStep's `call` to its implementation.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dlc/attributes.h"
#include "runtime/plan/plan.pb.h"

namespace dlc::cuda {

/// The device addresses of a step's operands, in the step's order (null: absent).
struct LibraryOperands {
  std::vector<void*> inputs, outputs;
  void* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  void* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
};

/// The operands of `step` (a LIBRARY step of `stage`) with the stage's buffers at `arena`.
LibraryOperands library_operands(const plan::Stage& stage, const plan::Step& step, uint8_t* arena);

class LibraryCall {
 public:
  virtual ~LibraryCall() = default;
  /// The scratch one run needs (the session's shared workspace is at least this large).
  virtual size_t workspace_bytes() const = 0;
  virtual void run(const LibraryOperands& operands, void* workspace, cudaStream_t stream) const = 0;
};

/// The library handles of one session, created when a step first needs them, bound to its stream.
class LibraryHandles {
 public:
  /// `benchmark_algorithms`: cuDNN calls time the algorithms (SessionOptions::cudnn_benchmark).
  explicit LibraryHandles(cudaStream_t stream, bool benchmark_algorithms = false)
      : stream_(stream), benchmark_algorithms_(benchmark_algorithms) {}
  ~LibraryHandles();
  LibraryHandles(const LibraryHandles&) = delete;
  LibraryHandles& operator=(const LibraryHandles&) = delete;

  cublasLtHandle_t cublaslt();
  void* cudnn();  // a cudnnHandle_t (cudnn.h stays out of this header)
  cudaStream_t stream() const { return stream_; }
  bool benchmark_algorithms() const { return benchmark_algorithms_; }
  /// Algorithm choices by problem, shared by the session's calls of one kind.
  std::map<std::string, std::string>& algorithm_cache() { return algorithms_; }

 private:
  cudaStream_t stream_;
  bool benchmark_algorithms_;
  cublasLtHandle_t cublaslt_ = nullptr;
  void* cudnn_ = nullptr;
  std::map<std::string, std::string> algorithms_;  // key -> the chosen algorithm's bytes
};

/// Whether this build implements `call` ("cublasLt.matmul", "cudnn.convolution_forward", …).
bool implements_library_call(const std::string& call);

/// The call `call` of a step with parameters `params`; `what` names the step in errors.
std::unique_ptr<LibraryCall> make_library_call(LibraryHandles& handles, const std::string& call,
                                               const Attrs& params, const std::string& what);

/// The library calls of a stage's steps (null for the other steps) and the most scratch one needs.
struct StageLibraryCalls {
  std::vector<std::unique_ptr<LibraryCall>> by_step;
  int64_t workspace_bytes = 0;
};
StageLibraryCalls make_library_calls(LibraryHandles& handles, const plan::Stage& stage);

}  // namespace dlc::cuda
