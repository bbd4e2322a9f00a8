// The cuDNN library calls of a CUDA plan (legacy cuDNN 9 API): convolution forward (bias, residual
// and Relu as cudnnAddTensor / cudnnActivationForward after it), backward data (ConvTranspose, with
// beta over a residual copied into the result first) and backward filter, pooling forward and
// backward (max backward recomputes the forward's result into the workspace), and batch
// normalization forward (training, updating running statistics copied into the results first, or
// inference) and backward, with a folded Relu. Algorithms come from cuDNN's heuristics (_v7),
// the first that succeeds within kMaxCudnnWorkspaceBytes, cached per problem; f32 convolutions use
// FMA math (no TF32, as the CPU kernels), 16-bit ones tensor cores, all accumulate in f32.
#pragma once

#include <memory>
#include <string>

#include "dlc/attributes.h"
#include "runtime/cuda/library_call.h"

namespace dlc::cuda {

/// The most scratch a cuDNN algorithm may ask for.
constexpr size_t kMaxCudnnWorkspaceBytes = size_t(256) << 20;

/// Whether `call` is one of the cuDNN calls above ("cudnn.convolution_forward", …).
bool is_cudnn_call(const std::string& call);

/// Builds `call`; throws dlc::Error naming `what` for a form cuDNN does not take (asymmetric
/// padding, dilated pooling, MaxPool's indices, half-precision batch-norm parameters, biased
/// running variance).
std::unique_ptr<LibraryCall> make_cudnn_call(LibraryHandles& handles, const std::string& call,
                                             const Attrs& params, const std::string& what);

/// The key an algorithm choice is cached under: the call, the dtype, the operands' dims and the
/// window (strides, pads, dilations, group) of the step's library parameters.
std::string cudnn_problem_key(const std::string& call, const Attrs& params);

}  // namespace dlc::cuda
