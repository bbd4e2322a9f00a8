// The CPU kernels' vectorizable exp and erf (runtime/cpu/simd_math.h) against the f64 libm
// functions: ulp error over floats sampled across the whole range (every 251st bit pattern, both
// signs), and the special values.
//
// simd_erf's coefficients came from this fit (numpy, f64 erf from math.erf; weighted least squares
// on 4000 Chebyshev nodes, polynomials in t = x^2 on [0, 0.921875^2] and in x - 2.4 on
// [0.921875, 3.925]):
//   q(t) = erf(sqrt t) / sqrt t - 1, degree 6, weights 1/|q|;
//   R(x) = erfc(x) exp(x^2), degree 11, weights 1/R.
#include "runtime/cpu/simd_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace dlc::cpu {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// |got - want| in units of the float spacing at want (want rounded to float).
double ulp_error(float got, double want) {
  const float w = float(want);
  const double spacing = double(std::nextafter(std::fabs(w), kInf)) - double(std::fabs(w));
  return std::fabs(double(got) - want) / spacing;
}

template <typename Check>
void for_sampled_floats(Check check) {
  for (uint64_t bits = 0; bits < (uint64_t(1) << 31); bits += 251) {
    const float x = std::bit_cast<float>(uint32_t(bits));
    if (std::isnan(x)) continue;
    check(x);
    check(-x);
  }
}

TEST(SimdMath, ExpWithinItsUlpBoundOfF64) {
  double worst = 0;
  float worst_x = 0;
  const float smallest_normal = std::numeric_limits<float>::min();
  for_sampled_floats([&](float x) {
    const double want = std::exp(double(x));
    const float got = simd_exp(x);
    if (want > double(std::numeric_limits<float>::max())) {
      // Past FLT_MAX after rounding: expf's inf.
      if (float(want) == kInf) {
        ASSERT_EQ(got, kInf) << "x = " << x;
      }
      return;
    }
    if (want < double(smallest_normal)) {  // subnormal or 0: within one subnormal step
      ASSERT_LE(std::fabs(double(got) - want), double(std::numeric_limits<float>::denorm_min()))
          << "x = " << x;
      return;
    }
    const double e = ulp_error(got, want);
    if (e > worst) worst = e, worst_x = x;
  });
  EXPECT_LE(worst, 1.5) << "at x = " << worst_x;
}

TEST(SimdMath, ErfWithinItsUlpBoundOfF64) {
  double worst = 0;
  float worst_x = 0;
  for_sampled_floats([&](float x) {
    const double e = ulp_error(simd_erf(x), std::erf(double(x)));
    if (e > worst) worst = e, worst_x = x;
  });
  EXPECT_LE(worst, 1.5) << "at x = " << worst_x;
}

TEST(SimdMath, SpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(simd_exp(nan)));
  EXPECT_EQ(simd_exp(kInf), kInf);
  EXPECT_EQ(simd_exp(-kInf), 0.f);
  EXPECT_EQ(simd_exp(0.f), 1.f);
  EXPECT_EQ(simd_exp(-0.f), 1.f);
  EXPECT_EQ(simd_exp(88.72283f), std::exp(88.72283f));  // the largest finite result
  EXPECT_EQ(simd_exp(88.7229f), kInf);
  EXPECT_EQ(simd_exp(-104.f), 0.f);
  EXPECT_GT(simd_exp(-103.f), 0.f);  // subnormal
  EXPECT_TRUE(std::isnan(simd_erf(nan)));
  EXPECT_EQ(simd_erf(kInf), 1.f);
  EXPECT_EQ(simd_erf(-kInf), -1.f);
  EXPECT_EQ(simd_erf(0.f), 0.f);
  EXPECT_TRUE(std::signbit(simd_erf(-0.f)));
  EXPECT_EQ(simd_erf(4.f), 1.f);
  EXPECT_EQ(simd_erf(-10.f), -1.f);
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(simd_erf(tiny), std::erf(tiny));
}

// The f64 overloads are libm's.
TEST(SimdMath, DoubleIsLibm) {
  for (double x : {-3.5, -0.25, 0.0, 0.7, 2.0, 50.0}) {
    EXPECT_EQ(simd_exp(x), std::exp(x));
    EXPECT_EQ(simd_erf(x), std::erf(x));
  }
}

}  // namespace
}  // namespace dlc::cpu
