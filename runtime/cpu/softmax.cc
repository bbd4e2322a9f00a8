// Softmax and its gradient along an axis (softmax.h): a contiguous row at a time when the axis is
// the last one, else blocks of up to 64 inner positions, each with its own max and sums.
#include "runtime/cpu/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/cpu/parallel.h"
#include "runtime/cpu/simd_math.h"

namespace dlc::cpu {

namespace {

// One contiguous row of R values: the max, exp(x - max) and its sum in double, in the order of
// the blocked loops below (so both give the same bits).
template <bool Log, typename T>
DLC_SIMD_CLONES void softmax_row(const T* __restrict x, T* __restrict y, int64_t R) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t j = 0; j < R; ++j) m = std::max(m, x[j]);
#pragma omp simd
  for (int64_t j = 0; j < R; ++j) y[j] = simd_exp(x[j] - m);  // LogSoftmax overwrites it below
  double s = 0;
  for (int64_t j = 0; j < R; ++j) s += double(y[j]);
  s = Log ? double(m) + std::log(s) : 1.0 / s;
#pragma omp simd
  for (int64_t j = 0; j < R; ++j) y[j] = Log ? T(double(x[j]) - s) : T(double(y[j]) * s);
}

// Inner positions [i0, i0 + n) of outer index o, n <= kInnerBlock.
template <bool Log, typename T>
void softmax_block(const T* xb, T* yb, int64_t R, int64_t inner, int64_t n) {
  T m[kInnerBlock];
  double s[kInnerBlock];
  std::fill_n(m, n, -std::numeric_limits<T>::infinity());
  std::fill_n(s, n, 0.0);
  for (int64_t j = 0; j < R; ++j)
    for (int64_t i = 0; i < n; ++i) m[i] = std::max(m[i], xb[j * inner + i]);
  for (int64_t j = 0; j < R; ++j)
    for (int64_t i = 0; i < n; ++i) {
      T e = simd_exp(xb[j * inner + i] - m[i]);
      if constexpr (!Log) yb[j * inner + i] = e;
      s[i] += double(e);
    }
  for (int64_t i = 0; i < n; ++i) s[i] = Log ? double(m[i]) + std::log(s[i]) : 1.0 / s[i];
  for (int64_t j = 0; j < R; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t e = j * inner + i;
      yb[e] = Log ? T(double(xb[e]) - s[i]) : T(double(yb[e]) * s[i]);
    }
}

// Softmax's gradient over one contiguous row: the sum in R's order, as the blocked loop below.
template <typename T>
DLC_SIMD_CLONES void softmax_grad_row(const T* dy, const T* y, T* dx, int64_t R) {
  double s = 0;
  for (int64_t j = 0; j < R; ++j) s += double(dy[j]) * double(y[j]);
#pragma omp simd
  for (int64_t j = 0; j < R; ++j) dx[j] = T(double(y[j]) * (double(dy[j]) - s));
}

template <typename T>
void softmax_grad_block(const T* dy, const T* y, T* dx, int64_t R, int64_t inner, int64_t n) {
  double s[kInnerBlock];
  std::fill_n(s, n, 0.0);
  for (int64_t j = 0; j < R; ++j)
    for (int64_t i = 0; i < n; ++i) s[i] += double(dy[j * inner + i]) * double(y[j * inner + i]);
  for (int64_t j = 0; j < R; ++j)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t e = j * inner + i;
      dx[e] = T(double(y[e]) * (double(dy[e]) - s[i]));
    }
}

// Calls row(o) for every outer index (inner = 1), else block(offset, n) for every outer index and
// block of up to kInnerBlock inner positions; in parallel when the tensor is large.
template <typename Row, typename Block>
void for_rows_or_blocks(int64_t outer, int64_t R, int64_t inner, Row&& row, Block&& block) {
  if (inner == 1) {
    parallel_chunks(outer, kReduceParallelWork / std::max<int64_t>(R, 1), [&](int64_t r0, int64_t r1) {
      for (int64_t o = r0; o < r1; ++o) row(o * R);
    });
    return;
  }
  for_each_inner_block(outer, R, inner,
                       [&](int64_t o, int64_t i0, int64_t n) { block(o * R * inner + i0, n); });
}

}  // namespace

template <bool Log, typename T>
void softmax_along(const T* x, T* y, int64_t outer, int64_t R, int64_t inner) {
  for_rows_or_blocks(
      outer, R, inner, [&](int64_t b) { softmax_row<Log>(x + b, y + b, R); },
      [&](int64_t b, int64_t n) { softmax_block<Log>(x + b, y + b, R, inner, n); });
}

template <typename T>
void softmax_grad_along(const T* dy, const T* y, T* dx, int64_t outer, int64_t R, int64_t inner) {
  for_rows_or_blocks(
      outer, R, inner, [&](int64_t b) { softmax_grad_row(dy + b, y + b, dx + b, R); },
      [&](int64_t b, int64_t n) { softmax_grad_block(dy + b, y + b, dx + b, R, inner, n); });
}

template void softmax_along<false, float>(const float*, float*, int64_t, int64_t, int64_t);
template void softmax_along<true, float>(const float*, float*, int64_t, int64_t, int64_t);
template void softmax_along<false, double>(const double*, double*, int64_t, int64_t, int64_t);
template void softmax_along<true, double>(const double*, double*, int64_t, int64_t, int64_t);
template void softmax_grad_along(const float*, const float*, float*, int64_t, int64_t, int64_t);
template void softmax_grad_along(const double*, const double*, double*, int64_t, int64_t, int64_t);

}  // namespace dlc::cpu
