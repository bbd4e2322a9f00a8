// The forms of library calls (cuBLASLt, cuDNN) that dlc's CUDA runtime takes, checked from a
// step's recorded parameters alone: the step binding refuses another form when a plan is compiled
// (the step has no CUDA path), and the runtime checks again before it builds the call. Pure
// arithmetic: tested without a GPU.
#pragma once

#include <string>

#include "dlc/attributes.h"

namespace dlc::codegen::cuda {

/// Throws dlc::Error naming `what` when the runtime does not take call `call` with `params`: an
/// element type other than f32, f16 or bf16; a GEMM epilogue it does not know or batch dims that
/// are neither equal nor one-sided; a convolution or pooling window with asymmetric padding
/// (window_geometry.h); dilated pooling, or MaxPool's indices; batch normalization with
/// half-precision scale, bias or statistics, or (training) the biased running variance of one
/// value per channel (the runtime rescales cuDNN's unbiased one).
void check_library_call(const std::string& call, const Attrs& params, const std::string& what);

/// The values per channel of a forward batch normalization's x (`input0_dims`): N times its
/// spatial size.
int64_t batch_norm_count(const Attrs& params);

/// Whether a training batch normalization's step updates a running variance (output 2) with the
/// biased batch variance (ONNX's; `running_var_unbiased` 0), which the runtime rescales cuDNN's
/// unbiased one into.
bool updates_biased_running_variance(const Attrs& params);

/// A step operand's dims (`input0_dims`, …) in the op's channels-first order (N, C, spatial…): a
/// channels-last step's operands of rank 3 or more are stored (N, spatial…, C).
Shape operand_dims(const Attrs& params, const std::string& name);

}  // namespace dlc::codegen::cuda
