// exp and erf for f32 that the compiler vectorizes: arithmetic, bit moves and selects only, no
// libm call, so a `#pragma omp simd` loop over them becomes SIMD code. glibc's expf and erff are
// scalar calls, and they were most of the time of the GELU forward and backward kernels.
//
// Accuracy (tests/unit/simd_math_test.cc checks it against the f64 functions over 17 M floats
// sampled across the whole range): simd_exp within 0.96 ulp wherever the result is normal (the
// test allows 1.5), subnormal results within one subnormal step, overflow to inf and underflow to
// 0 where expf gives them; simd_erf within 1.2 ulp (allowed 1.5). NaN in gives NaN out;
// erf(±inf) = ±1, erf(-0) = -0.
//
// The f64 overloads are the libm functions: only f32 has a fast path. The f32 exp and erf of the
// elementwise ops (Exp, Erf, Sigmoid) and of the fused programs' interpreter both come from here,
// so a fused chain keeps the bits of the unfused ops. Softmax, LogSoftmax, the softmax
// cross-entropy loss and its gradient (softmax.h) and Attention use simd_exp too.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>

// A function compiled three times, for AVX-512, AVX2 and the baseline x86-64, the loader picking
// the one the machine runs (GCC's function multiversioning): put on a function whose loops call
// simd_exp or simd_erf, they run 16 or 8 lanes wide where the CPU has them instead of SSE's 4.
// The clones give the same bits (runtime/CMakeLists.txt: no contraction to FMA). Such a function
// must not throw: GCC 12 takes a call through the clones' dispatcher for one that cannot, and an
// exception leaving it terminates the program. Keep the checks (ctx.fail) in an uncloned caller.
#if defined(__x86_64__) && !defined(__clang__)
#define DLC_SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DLC_SIMD_CLONES
#endif

namespace dlc::cpu {

// c[0] x^(N-1) + c[1] x^(N-2) + … + c[N-1], by Horner's rule.
template <size_t N>
inline float horner(float x, const float (&c)[N]) {
  float p = c[0];
  for (size_t i = 1; i < N; ++i) p = p * x + c[i];
  return p;
}

// exp(x) = 2^n exp(r), n = round(x / ln 2), r = x - n ln 2 (Cody and Waite's two-part ln 2),
// exp(r) by Cephes' degree-6 polynomial on |r| <= ln 2 / 2. 2^n is applied in two factors, each a
// normal float, so a subnormal result is rounded once.
inline float simd_exp(float x) {
  static constexpr float kExpR[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                    4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  // NaN takes the path of 0 (no NaN reaches the float-to-int conversion) and is returned at the end.
  const float c = x != x ? 0.f : x < -104.f ? -104.f : x > 89.f ? 89.f : x;
  const float n = (c * 1.44269504088896341f + 12582912.f) - 12582912.f;  // round to nearest: 1.5 * 2^23
  const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  const float e = horner(r, kExpR) * (r * r) + r + 1.f;
  const int32_t k = int32_t(n), half = k / 2;
  const float y = e * std::bit_cast<float>((half + 127) << 23) * std::bit_cast<float>((k - half + 127) << 23);
  return x != x ? x : y;
}

// erf(x) = x + x q(x^2) for |x| < 0.921875 (q: degree 6); 1 - exp(-x^2) R(|x|) up to 3.925, with
// R(x) = erfc(x) exp(x^2) a degree-11 polynomial in x - 2.4; 1 beyond, where erfc(x) is below
// half a float ulp of 1. Both fits are weighted least squares on Chebyshev nodes against the f64
// erf (the test's header comment), coefficients rounded to f32.
inline float simd_erf(float x) {
  static constexpr float kErfQ[] = {8.406191773246974e-05f, -0.000814734201412648f, 0.005200930405408144f,
                                    -0.026859045028686523f, 0.1128368005156517f,    -0.37612631916999817f,
                                    0.12837916612625122f};
  static constexpr float kErfcR[] = {
      -4.85812165607058e-07f,  2.204988049925305e-06f, -5.379380581871374e-06f, 1.8276636183145456e-05f,
      -7.300714059965685e-05f, 0.0002593965036794543f, -0.0008740125340409577f, 0.002866483526304364f,
      -0.00906593818217516f,   0.027494370937347412f,  -0.07958526909351349f,   0.21849872171878815f};
  const float a = std::fabs(x), t = x * x;
  const float small = x + x * horner(t, kErfQ);
  const float u = (a > 3.925f ? 3.925f : a) - 2.4f;  // NaN stays NaN
  const float large = a > 3.925f ? 1.f : 1.f - simd_exp(-t) * horner(u, kErfcR);
  return a < 0.921875f ? small : x != x ? x : std::copysign(large, x);
}

inline double simd_exp(double x) { return std::exp(x); }
inline double simd_erf(double x) { return std::erf(x); }

}  // namespace dlc::cpu
