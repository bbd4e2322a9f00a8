// The strided view a Slice selects in the tensor it slices: the element offset of its first
// position and the element strides between positions, from the starts/axes/steps attributes.
// Slice reads through the view; SliceGrad writes dy through it.
#pragma once

#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

struct SliceView {
  int64_t offset = 0;  // elements from the start of the full tensor
  Shape strides;       // per axis of the sliced tensor, in elements of the full tensor
};

/// The view of `sliced` dims in a row-major tensor of `full` dims; fails (naming the axis) when a
/// position falls outside the full tensor or the attributes disagree in length.
SliceView slice_view(const KernelContext& ctx, const Shape& full, const Shape& sliced);

}  // namespace dlc::cpu
