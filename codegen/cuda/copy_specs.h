// The copies (copy_emitter.h) of the data-movement ops, from their attributes and operand types:
// Slice, Pad, Concat, Transpose, Tile, SliceGrad, Split and Trilu, and GatherElements, whose copy reads
// at an index tensor's entries (gather_elements_emitter.h). The CUDA op table binds these ops with
// them; the emulation tests run them against the CPU kernels of the same attributes.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/copy_emitter.h"
#include "codegen/cuda/gather_elements_emitter.h"
#include "dlc/attributes.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

/// Each throws dlc::Error naming the attribute that does not fit the operands.
CopySpec slice_copy(const Attrs& attrs, const TensorType& in, const TensorType& out);
CopySpec pad_copy(const Attrs& attrs, const TensorType& in, const TensorType& out);
CopySpec concat_copy(const Attrs& attrs, const std::vector<TensorType>& ins, const TensorType& out);
CopySpec transpose_copy(const Attrs& attrs, const TensorType& in, const TensorType& out);
CopySpec tile_copy(const TensorType& in, const TensorType& out);
/// dx of SliceGrad(dy): dy read where (x - start) / step is a whole number in range, zeros elsewhere.
CopySpec slice_grad_copy(const Attrs& attrs, const TensorType& dy, const TensorType& dx);
/// Trilu (attributes upper, k): the input inside the band, zeros outside.
CopySpec trilu_copy(const Attrs& attrs, const TensorType& in, const TensorType& out);
/// One copy per output of Split, for emit_copies.
std::vector<CopySpec> split_copies(const Attrs& attrs, const TensorType& in,
                                   const std::vector<TensorType>& outs);

GatherElementsSpec gather_elements_spec(const Attrs& attrs, const TensorType& data, const TensorType& indices,
                                        const TensorType& out);

/// The kernels of data-movement op `op` (any of the above, by its op name) on operands of these
/// types. Throws dlc::Error for another op, or as the functions above do.
KernelSource emit_copy_op(const std::string& op, const Attrs& attrs, const std::vector<TensorType>& ins,
                          const std::vector<TensorType>& outs);

}  // namespace dlc::codegen::cuda
