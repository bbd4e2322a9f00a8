// Softmax cross-entropy (the IR's SoftmaxCrossEntropyLoss, with or without class weights, and
// SoftmaxCrossEntropyGrad without them) and NegativeLogLikelihoodLoss (its forward, on scores that
// are log-probabilities): scores [N, C, D…] with the classes on axis 1, integer labels [N, D…],
// optional class weights [C], reduction mean (over the positions whose label is not ignore_index,
// weighted: the summed loss over the summed weights, as ONNX and PyTorch), sum or none.
// A label outside [0, C) that is not ignored gives a NaN loss and NaN gradients (the CPU
// kernels report an error instead; a GPU kernel cannot).
//
// Entries:
//   forward  [rows](scores, labels, weight, workspace, loss, log_prob)  weight and log_prob may be
//            null (NegativeLogLikelihoodLoss has no log_prob); with
//            reduction none the per-position losses go to `loss`, otherwise to the workspace and
//            [final](workspace, loss) adds them up
//   backward [count](labels, workspace) (mean with ignore_index only: counts the positions),
//            then [rows](dloss, scores, labels, workspace, dscores)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct CrossEntropySpec {
  DType dtype = DType::F32;        // scores, loss, log_prob, dloss, dscores
  DType label_dtype = DType::I64;  // i64 or i32
  int64_t batch = 1, classes = 1, inner = 1;
  std::string reduction = "mean";  // mean, sum, none
  std::optional<int64_t> ignore_index;
  bool log_probabilities = false;  // NegativeLogLikelihoodLoss: the scores are log-probabilities
};

KernelSource emit_cross_entropy_forward(const CrossEntropySpec& spec);
KernelSource emit_cross_entropy_backward(const CrossEntropySpec& spec);

}  // namespace dlc::codegen::cuda
