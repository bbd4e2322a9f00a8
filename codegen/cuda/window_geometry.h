// The window of a plan's convolution or pooling step as cuDNN takes it: per spatial dimension the
// padding, stride and dilation, with a 1-D window given a unit second dimension (cuDNN's Nd
// descriptors need at least 2), and tensor dims padded with trailing 1s to rank 4. cuDNN pads
// symmetrically: a window whose end padding differs keeps its begin padding where the end one
// adds no result (the plan's result has the symmetric formula's size); otherwise (SAME_UPPER with
// a stride, ceil mode: its end padding runs to the last window's end) the geometry says to pad the
// input explicitly, by each dim's begin and end padding, and slide the window over that with none. Also the strides of a channels-first or
// channels-last tensor descriptor. Pure arithmetic: tested without a GPU.
#pragma once

#include <string>
#include <vector>

#include "dlc/attributes.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

struct WindowGeometry {
  std::vector<int> window, pads, strides, dilations;  // per spatial dim, at least 2
  int groups = 1;
  /// The input's explicit padding per spatial dim (pads then all 0), or empty where cuDNN's own
  /// symmetric padding gives the result.
  std::vector<int> explicit_begin, explicit_end;

  bool pads_explicitly() const { return !explicit_begin.empty(); }
};

/// The window of a step sliding `window` (the kernel's spatial dims) over `in` (N, C, spatial…)
/// to give `out`, with the step's pads, strides, dilations and group. Throws dlc::Error naming
/// `what` when `out` is not what the step's padding gives.
WindowGeometry window_geometry(const Attrs& params, const Shape& in, const Shape& out, const Shape& window,
                               const std::string& what);

/// `dims` with trailing 1s up to rank 4 (or `rank`), as ints.
std::vector<int> cudnn_dims(const Shape& dims, size_t rank = 4);

/// The element strides of a packed tensor of channels-first `dims` (N, C, spatial…) stored in
/// that order, or with `channels_last` with the channels innermost (N, spatial…, C: cuDNN's NHWC).
std::vector<int> packed_strides(const std::vector<int>& dims, bool channels_last);

}  // namespace dlc::codegen::cuda
