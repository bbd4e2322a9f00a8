// Layer normalization over the trailing `cols` elements of each of `rows` rows, forward and
// backward (the IR's LayerNormalization and LayerNormGrad); statistics in f32, scale and bias in
// the storage type, mean and inverse standard deviation as f32; y (and so dy) in the storage type
// or, for mixed precision's half layer norm of an f32 x, in y_dtype. InstanceNormalization of
// [N, C, D…] is the forward on rows of [N · C, D…] with a scale and bias per row's channel
// (`channels` = C; row r is channel r mod C), as the CPU kernel's and the gradient rule's
// statistics (passes/grad/norm.cc).
//
// Entries:
//   forward  [fwd](x, scale, bias, y, mean, inv_std)    bias may be null without has_bias; mean
//                                                        and inv_std may be null (not wanted)
//   backward [dx](dy, x, scale, dx, workspace)           statistics recomputed from x, kept in
//                                                        the workspace for:
//            [dparams](dy, x, workspace, dscale, dbias)  column sums over the rows; with more
//                                                        than one split also [dparams_final]
//                                                        (workspace, dscale, dbias)
#pragma once

#include <cstdint>
#include <optional>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct LayerNormSpec {
  DType dtype = DType::F32;
  int64_t rows = 1, cols = 1;
  double epsilon = 1e-5;
  bool has_bias = true;          // forward only
  std::optional<DType> y_dtype;  // y's (forward) or dy's (backward) type where not dtype
  int64_t channels = 0;          // forward only: > 0 scales and biases row r by element r mod channels
};

KernelSource emit_layer_norm_forward(const LayerNormSpec& spec);
KernelSource emit_layer_norm_backward(const LayerNormSpec& spec);

}  // namespace dlc::codegen::cuda
