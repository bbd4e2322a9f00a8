// RowCounter (runtime/cpu/row_counter.h), the row walk of the strided kernels: its offsets equal
// the index decomposed by division at every step, from any starting index, including the wrap
// past the last index, with operands of broadcast (0), reversed and permuted strides.
#include "runtime/cpu/row_counter.h"

#include <gtest/gtest.h>

#include <random>

namespace dlc::cpu {
namespace {

int64_t offset_by_division(const Shape& dims, const Shape& strides, int64_t index) {
  int64_t off = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    off += (index % dims[d]) * strides[d];
    index /= dims[d];
  }
  return off;
}

TEST(RowCounter, OffsetsEqualTheDividedIndexFromAnyStart) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t rank = 1 + rng() % 4;
    Shape dims(rank), a(rank + 1), b(rank + 1);  // one longer: a full-rank list's inner stride
    for (size_t d = 0; d < rank; ++d) {
      dims[d] = 1 + int64_t(rng() % 5);
      a[d] = int64_t(rng() % 3) == 0 ? 0 : int64_t(rng() % 50);
      b[d] = int64_t(rng() % 41) - 20;
    }
    a[rank] = b[rank] = 999;  // never read
    const int64_t total = num_elements(dims);
    const int64_t first = int64_t(rng() % uint64_t(total));
    RowCounter<2> counter(dims, {&a, &b}, first);
    for (int64_t step = 0; step <= total; ++step) {  // one past the end: wraps to index 0
      const int64_t index = (first + step) % total;
      ASSERT_EQ(counter.offset(0), offset_by_division(dims, a, index)) << "trial " << trial;
      ASSERT_EQ(counter.offset(1), offset_by_division(dims, b, index)) << "trial " << trial;
      ASSERT_EQ(counter.offsets()[1], counter.offset(1));
      counter.next();
    }
  }
}

TEST(RowCounter, NoDimsIsOneIndexAtOffsetZero) {
  const Shape dims, strides;
  RowCounter<1> counter(dims, {&strides});
  EXPECT_EQ(counter.offset(0), 0);
  counter.next();
  EXPECT_EQ(counter.offset(0), 0);
}

}  // namespace
}  // namespace dlc::cpu
