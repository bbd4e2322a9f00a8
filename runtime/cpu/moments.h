// Mean and biased variance accumulated in double, shared by the normalization kernels and their
// gradients so that both see the same statistics.
#pragma once

#include <algorithm>
#include <cstdint>

namespace dlc::cpu {

/// Mean and biased variance over contiguous segments of values, shifted by the first value seen
/// (which keeps the one-pass variance accurate when |mean| >> stddev).
struct Moments {
  double shift = 0, sum = 0, sum_sq = 0;
  int64_t count = 0;

  template <typename T>
  void add(const T* p, int64_t n) {
    if (n <= 0) return;
    if (count == 0) shift = double(p[0]);
    double s = 0, ss = 0;
    // simdlen(8): four SSE2 double accumulators per sum, so the adds do not wait on each other.
#pragma omp simd simdlen(8) reduction(+ : s, ss)
    for (int64_t i = 0; i < n; ++i) {
      const double d = double(p[i]) - shift;
      s += d;
      ss += d * d;
    }
    sum += s;
    sum_sq += ss;
    count += n;
  }
  double mean() const { return count ? shift + sum / double(count) : 0.0; }
  double variance() const {
    if (!count) return 0.0;
    const double m = sum / double(count);
    return std::max(0.0, sum_sq / double(count) - m * m);
  }
};

}  // namespace dlc::cpu
