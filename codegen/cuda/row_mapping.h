// How row kernels (row reductions, softmax, layer norm, cross-entropy) map rows to threads, and
// the device helpers they share. A tensor is viewed as [outer, extent, inner] and each of the
// outer * inner rows runs over `extent` elements inner apart (inner = 1: contiguous rows). Short
// rows (extent <= 1024) get one warp each, longer ones a block each.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codegen/cuda/kernel_source.h"

namespace dlc::codegen::cuda {

struct RowLayout {
  int64_t outer = 1, extent = 1, inner = 1;
  int64_t rows() const { return outer * inner; }
  int64_t numel() const { return outer * extent * inner; }
};

struct RowMapping {
  bool warp_per_row = true;
  int block = 256;         // threads per block
  int rows_per_block = 8;  // warp_per_row: block / 32; else 1
  int64_t grid = 1;
};

RowMapping row_mapping(const RowLayout& layout);

/// Device code defining `Index`, kRows, kExtent, kInner, kRowThreads and dlc_row_first(),
/// dlc_row_step(), dlc_row_lane(), dlc_row_base(row), dlc_row_sum(v, scratch),
/// dlc_row_max(v, scratch). A kernel loops `for (Index row = dlc_row_first(); row < kRows;
/// row += dlc_row_step())`, each lane covering elements lane, lane + kRowThreads, … of the row.
std::string row_helpers(const RowLayout& layout, const RowMapping& mapping);

/// Splits of each row of a row reduction (rows x splits blocks, then a combining pass): about two
/// waves on an H100/H200 when there are few rows, each split at least 8192 elements; 1 when there
/// are enough rows or the rows are short.
int64_t row_splits(int64_t rows, int64_t extent);

/// Splits of a column reduction over `extent` so that `column_blocks` blocks become about two
/// waves on an H100/H200 (132 SMs); 1 when there are already enough blocks or too little work.
int64_t column_splits(int64_t extent, int64_t column_blocks);

/// The launch of a column-reduction kernel (column reductions, layer norm's parameter gradients):
/// blocks of 32 x 8 threads (32 columns, 8 row slices), `column_blocks` x `grid_y` x `grid_z` of
/// them.
LaunchConfig column_launch(int64_t column_blocks, int64_t grid_y, int64_t grid_z = 1);

}  // namespace dlc::codegen::cuda
