// The row walk shared by the strided kernels (copies, broadcasting elementwise ops, reductions
// over scattered axes): a counter over a tensor's outer dims that keeps each operand's element
// offset and steps to the next row with additions only. Seeding divides once per chunk of rows;
// a division per row was most of the time of short rows (a head split's, a bias broadcast's).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "dlc/tensor.h"

namespace dlc::cpu {

/// Walks the index space of `dims` in row-major order from index `first`, keeping
/// offset(k) = Σ_d index_d · strides[k][d] for each of the K operands. strides[k] may be longer
/// than `dims` (a full-rank stride list whose innermost entry is the row's own): only the first
/// dims.size() entries are read. `dims` and the stride lists must outlive the counter.
template <size_t K>
class RowCounter {
 public:
  RowCounter(const Shape& dims, const std::array<const Shape*, K>& strides, int64_t first = 0)
      : dims_(dims), strides_(strides), index_(dims.size(), 0) {
    for (size_t d = dims.size(); d-- > 0 && first > 0;) {
      index_[d] = first % dims[d];
      first /= dims[d];
      for (size_t k = 0; k < K; ++k) off_[k] += index_[d] * (*strides_[k])[d];
    }
  }

  int64_t offset(size_t k) const { return off_[k]; }
  const std::array<int64_t, K>& offsets() const { return off_; }

  /// Steps to the next index (past the last one it wraps to index 0).
  void next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      for (size_t k = 0; k < K; ++k) off_[k] += (*strides_[k])[d];
      if (++index_[d] < dims_[d]) return;
      for (size_t k = 0; k < K; ++k) off_[k] -= dims_[d] * (*strides_[k])[d];
      index_[d] = 0;
    }
  }

 private:
  const Shape& dims_;
  std::array<const Shape*, K> strides_;
  Shape index_;
  std::array<int64_t, K> off_{};
};

}  // namespace dlc::cpu
