// Row-to-thread mapping of row kernels (row_mapping.h).
#include "codegen/cuda/row_mapping.h"

#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/emit_util.h"

namespace dlc::codegen::cuda {

RowMapping row_mapping(const RowLayout& layout) {
  RowMapping m;
  m.warp_per_row = layout.extent <= 1024;
  if (m.warp_per_row) {
    m.block = 256;
    m.rows_per_block = 8;
  } else {
    m.block = layout.extent >= 16384 ? 1024 : 256;
    m.rows_per_block = 1;
  }
  m.grid = grid_for(layout.rows(), m.rows_per_block);
  return m;
}

std::string row_helpers(const RowLayout& layout, const RowMapping& m) {
  const TemplateVars common = {
      {"INDEX", std::string(index_type(layout.numel()))},
      {"ROWS", fmt::format("{}", layout.rows())},
      {"EXTENT", fmt::format("{}", layout.extent)},
      {"INNER", fmt::format("{}", layout.inner)},
  };
  std::string s = fill(R"(
// Rows: ${ROWS} rows of ${EXTENT} elements, ${INNER} apart.
using Index = ${INDEX};
constexpr Index kRows = ${ROWS};
constexpr Index kExtent = ${EXTENT};
constexpr Index kInner = ${INNER};
// The first element of row r (r / kInner * kExtent * kInner + r % kInner, r * kExtent when kInner is 1).
__device__ __forceinline__ Index dlc_row_base(Index r) { return r / kInner * (kExtent * kInner) + r % kInner; }
)",
                       common);
  if (m.warp_per_row) {
    s += fill(R"(// One warp per row, ${RPB} rows per block.
constexpr int kRowThreads = 32;
__device__ __forceinline__ Index dlc_row_first() { return Index(blockIdx.x) * ${RPB} + Index(threadIdx.x >> 5); }
__device__ __forceinline__ Index dlc_row_step() { return Index(gridDim.x) * ${RPB}; }
__device__ __forceinline__ int dlc_row_lane() { return threadIdx.x & 31; }
__device__ __forceinline__ float dlc_row_sum(float v, float*) { return dlc_warp_sum(v); }
__device__ __forceinline__ float dlc_row_max(float v, float*) { return dlc_warp_max(v); }
)",
              {{"RPB", fmt::format("{}", m.rows_per_block)}});
  } else {
    s += fill(R"(// One block of ${BLOCK} threads per row.
constexpr int kRowThreads = ${BLOCK};
__device__ __forceinline__ Index dlc_row_first() { return Index(blockIdx.x); }
__device__ __forceinline__ Index dlc_row_step() { return Index(gridDim.x); }
__device__ __forceinline__ int dlc_row_lane() { return threadIdx.x; }
__device__ __forceinline__ float dlc_row_sum(float v, float* scratch) { return dlc_block_sum(v, scratch); }
__device__ __forceinline__ float dlc_row_max(float v, float* scratch) { return dlc_block_max(v, scratch); }
)",
              {{"BLOCK", fmt::format("{}", m.block)}});
  }
  return s;
}

namespace {
constexpr int64_t kTargetBlocks = 2 * 132;  // two waves of one block per SM on an H100/H200
}  // namespace

int64_t row_splits(int64_t rows, int64_t extent) {
  constexpr int64_t kMinPerSplit = 8192;  // elements a split reduces at least (32 per thread)
  if (rows >= kTargetBlocks) return 1;
  const int64_t want = kTargetBlocks / std::max<int64_t>(rows, 1);
  return std::clamp<int64_t>(std::min(want, extent / kMinPerSplit), 1, 1024);
}

int64_t column_splits(int64_t extent, int64_t column_blocks) {
  constexpr int64_t kMinPerSplit = 64;  // rows a split reduces at least
  if (column_blocks >= kTargetBlocks) return 1;
  const int64_t want = kTargetBlocks / std::max<int64_t>(column_blocks, 1);
  return std::clamp<int64_t>(std::min(want, extent / kMinPerSplit), 1, 1024);
}

LaunchConfig column_launch(int64_t column_blocks, int64_t grid_y, int64_t grid_z) {
  LaunchConfig c;
  c.grid[0] = column_blocks;
  c.grid[1] = grid_y;
  c.grid[2] = grid_z;
  c.block[0] = 32;
  c.block[1] = 8;
  return c;
}

}  // namespace dlc::codegen::cuda
