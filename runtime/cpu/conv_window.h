// The window of a Conv/ConvTranspose/ConvGradFilter step in oneDNN's terms, shared by the forward
// and gradient kernels: strides, dilations counted from 0, left and right padding, groups, and
// the weight descriptor with grouping (and the channel swap of ConvTranspose).
#pragma once

#include "runtime/cpu/onednn.h"

namespace dlc::cpu {

struct ConvWindow {
  dnnl::memory::dims strides, dilates, pad_l, pad_r;
  int64_t group = 1;
};

/// Reads the window attributes of `ctx` (spatial rank from input 0). A transposed convolution's
/// output_padding becomes extra (negative) right padding.
ConvWindow conv_window(const KernelContext& ctx, bool transposed);

/// The ONNX weight of `dims` as oneDNN's logical (g?, OC/g, IC/g, k…) weights. Conv stores
/// (OC, IC/g, k…); ConvTranspose stores (IC, OC/g, k…), i.e. input and output channels swapped.
dnnl::memory::desc conv_weight_desc(const Shape& dims, DType dtype, int64_t group, bool transposed);

}  // namespace dlc::cpu
