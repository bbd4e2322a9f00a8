// CPU kernels of the elementwise family: unary maps, broadcasting binary ops, comparisons,
// logic, Where, Clip and Cast. Float ops also run on f16/bf16 tensors, computing in f32.
#include <cmath>
#include <limits>
#include <type_traits>

#include "dlc/half.h"
#include "runtime/cpu/broadcast.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/simd_math.h"

namespace dlc::cpu {

namespace {

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// The type arithmetic is done in: f32 for the 16-bit float storage types, else the type itself.
template <typename T>
using Compute = std::conditional_t<kIsHalf<T>, float, T>;

template <typename T>
Compute<T> load(T v) {
  if constexpr (kIsHalf<T>)
    return float(v);
  else
    return v;
}

template <typename T>
T store(Compute<T> v) {
  if constexpr (kIsHalf<T>)
    return T(v);
  else
    return v;
}

template <typename T, typename Out = T, typename F>
void map_unary(const TensorView& in, const TensorView& out, F&& f) {
  const T* x = in.as<T>();
  Out* y = out.as<Out>();
  const int64_t n = in.numel();
  parallel_chunks(n, 65536, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
  });
}

// A unary op on floating-point tensors; f is a generic lambda over the compute type.
template <typename F>
void unary_float(const KernelContext& ctx, F&& f) {
  dispatch_float_ext(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    map_unary<T>(ctx.inputs[0], ctx.outputs[0], [&](T v) { return store<T>(C(f(load(v)))); });
  });
}

// A unary op on any numeric tensor.
template <typename F>
void unary_numeric(const KernelContext& ctx, F&& f) {
  dispatch_arith(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    map_unary<T>(ctx.inputs[0], ctx.outputs[0], [&](T v) { return store<T>(C(f(load(v)))); });
  });
}

// out[i] = f(a[ia], b[ib]) with broadcasting; operand and result element types given.
template <typename A, typename B, typename Out, typename F>
void map_binary(const TensorView& a, const TensorView& b, const TensorView& out, F&& f) {
  const A* pa = a.as<A>();
  const B* pb = b.as<B>();
  Out* po = out.as<Out>();
  if (a.dims == out.dims && b.dims == out.dims) {
    const int64_t n = out.numel();
    parallel_chunks(n, 65536, [&](int64_t begin, int64_t end) {
#pragma omp simd
      for (int64_t i = begin; i < end; ++i) po[i] = f(pa[i], pb[i]);
    });
    return;
  }
  for_each_broadcast_row<2>(
      out.dims, {&a.dims, &b.dims},
      [&](int64_t o, const std::array<int64_t, 2>& off, const std::array<int64_t, 2>& st, int64_t n) {
        const A* ra = pa + off[0];
        const B* rb = pb + off[1];
        for (int64_t j = 0; j < n; ++j) po[o + j] = f(ra[j * st[0]], rb[j * st[1]]);
      });
}

// A binary op on two tensors of one numeric dtype; f is a generic lambda over the compute type.
template <typename F>
void binary_numeric(const KernelContext& ctx, F&& f) {
  dispatch_arith(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    map_binary<T, T, T>(ctx.inputs[0], ctx.inputs[1], ctx.outputs[0],
                        [&](T a, T b) { return store<T>(C(f(load(a), load(b)))); });
  });
}

template <typename F>
void compare(const KernelContext& ctx, F&& f) {
  auto t = ctx.inputs[0].dtype;
  if (t == DType::Bool) t = DType::U8;
  dispatch_arith(t, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_binary<T, T, uint8_t>(ctx.inputs[0], ctx.inputs[1], ctx.outputs[0],
                              [&](T a, T b) { return uint8_t(f(load(a), load(b)) ? 1 : 0); });
  });
}

template <typename F>
void logical(const KernelContext& ctx, F&& f) {
  map_binary<uint8_t, uint8_t, uint8_t>(
      ctx.inputs[0], ctx.inputs[1], ctx.outputs[0],
      [&](uint8_t a, uint8_t b) { return uint8_t(f(a != 0, b != 0) ? 1 : 0); });
}

// Integer division and remainder fault on a zero divisor: reject it before the parallel loop.
template <typename T>
void check_nonzero_divisor(const KernelContext& ctx, const TensorView& b) {
  if constexpr (std::is_integral_v<T>) {
    const T* p = b.as<T>();
    for (int64_t i = 0, n = b.numel(); i < n; ++i)
      if (p[i] == 0) ctx.fail("integer division by zero (divisor element {})", i);
  }
}

// C division truncating toward zero, without the overflow trap of MIN / -1.
template <typename T>
T divide(T a, T b) {
  if constexpr (std::is_signed_v<T> && std::is_integral_v<T>) {
    if (b == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
  }
  return T(a / b);
}

// Remainder with the sign of the dividend (C fmod, fmod=1) or of the divisor (Python, fmod=0).
template <typename T>
T remainder(T a, T b, bool c_fmod) {
  T r;
  if constexpr (std::is_floating_point_v<T>) {
    r = std::fmod(a, b);
  } else if constexpr (std::is_signed_v<T>) {
    r = b == T(-1) ? T(0) : T(a % b);
  } else {
    r = T(a % b);
  }
  if constexpr (std::is_signed_v<T>) {
    if (!c_fmod && r != T(0) && ((r < T(0)) != (b < T(0)))) r = T(r + b);
  }
  return r;
}

// a ** b for integers by repeated squaring (exact); negative exponents give 0 unless |a| == 1.
template <typename T>
T int_pow(T a, int64_t b) {
  if (b < 0) {
    if (a == T(1)) return T(1);
    if constexpr (std::is_signed_v<T>) {
      if (a == T(-1)) return (b & 1) ? T(-1) : T(1);
    }
    return T(0);
  }
  using U = std::make_unsigned_t<std::conditional_t<(sizeof(T) < 4), int32_t, T>>;
  U base = U(a), result = 1;
  for (; b; b >>= 1, base *= base)
    if (b & 1) result *= base;
  return T(result);
}

template <typename T>
constexpr bool is_nan_value(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return v != v;
  else
    return false;
}

// Max/Min propagating a NaN operand like numpy's maximum/minimum and torch.maximum/minimum (a
// when both are NaN or equal). Branch-free selects, so the loops stay vectorized.
template <typename T>
T max_value(T a, T b) {
  return is_nan_value(b) || a < b ? b : a;
}
template <typename T>
T min_value(T a, T b) {
  return is_nan_value(b) || b < a ? b : a;
}

// ---- Cast: every dtype to every dtype, through int64 (integers, bool) or double (floats).

template <typename T>
struct CastElem {
  using storage = T;
};
template <>
struct CastElem<bool> {
  using storage = uint8_t;
};

template <typename From>
auto widen(typename CastElem<From>::storage raw) {
  if constexpr (std::is_same_v<From, bool>)
    return int64_t(raw != 0);
  else if constexpr (kIsHalf<From>)
    return double(float(raw));
  else if constexpr (std::is_floating_point_v<From>)
    return double(raw);
  else
    return int64_t(raw);
}

// Float to int64 truncating toward zero; NaN gives 0 and out-of-range values saturate.
inline int64_t float_to_int64(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

template <typename To, typename W>
typename CastElem<To>::storage narrow(W w) {
  if constexpr (std::is_same_v<To, bool>)
    return uint8_t(w != W(0) ? 1 : 0);
  else if constexpr (kIsHalf<To>)
    return To(float(w));
  else if constexpr (std::is_floating_point_v<To>)
    return To(w);
  else if constexpr (std::is_floating_point_v<W>)
    return To(float_to_int64(w));
  else
    return To(w);
}

}  // namespace

// ---- unary ops

void kernel_Abs(const KernelContext& ctx) {
  unary_numeric(ctx, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_floating_point_v<T>)
      return std::fabs(v);
    else if constexpr (std::is_unsigned_v<T>)
      return v;
    else
      return v < T(0) ? T(-v) : v;
  });
}

void kernel_Neg(const KernelContext& ctx) {
  unary_numeric(ctx, [](auto v) { return -v; });
}

void kernel_Sign(const KernelContext& ctx) {
  unary_numeric(ctx, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_unsigned_v<T>)
      return v > T(0) ? T(1) : T(0);
    else
      return v > T(0) ? T(1) : (v < T(0) ? T(-1) : v);  // 0 and NaN pass through
  });
}

void kernel_Relu(const KernelContext& ctx) {
  // NaN and -0 pass through as in torch.relu (one max instruction: NaN < 0 is false).
  unary_numeric(ctx, [](auto v) { return v < decltype(v)(0) ? decltype(v)(0) : v; });
}

void kernel_Not(const KernelContext& ctx) {
  map_unary<uint8_t>(ctx.inputs[0], ctx.outputs[0], [](uint8_t v) { return uint8_t(v == 0 ? 1 : 0); });
}

#define DLC_FLOAT_UNARY(op, expr)                  \
  void kernel_##op(const KernelContext& ctx) {     \
    unary_float(ctx, [](auto x) { return expr; }); \
  }
DLC_FLOAT_UNARY(Acos, std::acos(x))
DLC_FLOAT_UNARY(Acosh, std::acosh(x))
DLC_FLOAT_UNARY(Asin, std::asin(x))
DLC_FLOAT_UNARY(Asinh, std::asinh(x))
DLC_FLOAT_UNARY(Atan, std::atan(x))
DLC_FLOAT_UNARY(Atanh, std::atanh(x))
DLC_FLOAT_UNARY(Ceil, std::ceil(x))
DLC_FLOAT_UNARY(Cos, std::cos(x))
DLC_FLOAT_UNARY(Cosh, std::cosh(x))
DLC_FLOAT_UNARY(Erf, simd_erf(x))
DLC_FLOAT_UNARY(Exp, simd_exp(x))
DLC_FLOAT_UNARY(Floor, std::floor(x))
DLC_FLOAT_UNARY(Log, std::log(x))
DLC_FLOAT_UNARY(Reciprocal, decltype(x)(1) / x)
DLC_FLOAT_UNARY(Round, std::nearbyint(x))  // the default rounding mode rounds half to even
DLC_FLOAT_UNARY(Sin, std::sin(x))
DLC_FLOAT_UNARY(Sinh, std::sinh(x))
DLC_FLOAT_UNARY(Softsign, x / (decltype(x)(1) + std::fabs(x)))
DLC_FLOAT_UNARY(Sqrt, std::sqrt(x))
DLC_FLOAT_UNARY(Tan, std::tan(x))
DLC_FLOAT_UNARY(Tanh, std::tanh(x))
DLC_FLOAT_UNARY(Sigmoid, x >= 0 ? decltype(x)(1) / (decltype(x)(1) + simd_exp(-x))
                                : simd_exp(x) / (decltype(x)(1) + simd_exp(x)))
DLC_FLOAT_UNARY(HardSwish, x* std::fmax(decltype(x)(0),
                                        std::fmin(decltype(x)(1), x / decltype(x)(6) + decltype(x)(0.5))))
#undef DLC_FLOAT_UNARY

namespace {

// log(1 + exp(x)) without overflow.
template <typename T>
T softplus(T x) {
  return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

}  // namespace

void kernel_Softplus(const KernelContext& ctx) {
  unary_float(ctx, [](auto x) { return softplus(x); });
}

void kernel_Mish(const KernelContext& ctx) {
  unary_float(ctx, [](auto x) { return x * std::tanh(softplus(x)); });
}

void kernel_Celu(const KernelContext& ctx) {
  const double alpha = ctx.attrs.f("alpha", 1.0);
  unary_float(ctx, [alpha](auto x) {
    using T = decltype(x);
    const T a = T(alpha);
    return max_value(T(0), x) + min_value(T(0), a * std::expm1(x / a));  // NaN propagates
  });
}

void kernel_Elu(const KernelContext& ctx) {
  const double alpha = ctx.attrs.f("alpha", 1.0);
  unary_float(ctx, [alpha](auto x) {
    using T = decltype(x);
    return x < T(0) ? T(alpha) * std::expm1(x) : x;
  });
}

void kernel_Selu(const KernelContext& ctx) {
  const double alpha = ctx.attrs.f("alpha", 1.67326319217681884765625);
  const double gamma = ctx.attrs.f("gamma", 1.05070102214813232421875);
  unary_float(ctx, [alpha, gamma](auto x) {
    using T = decltype(x);
    return T(gamma) * (x > T(0) ? x : T(alpha) * std::expm1(x));
  });
}

void kernel_HardSigmoid(const KernelContext& ctx) {
  const double alpha = ctx.attrs.f("alpha", 0.2), beta = ctx.attrs.f("beta", 0.5);
  unary_float(ctx, [alpha, beta](auto x) {
    using T = decltype(x);
    return max_value(T(0), min_value(T(1), T(alpha) * x + T(beta)));  // NaN propagates
  });
}

void kernel_LeakyRelu(const KernelContext& ctx) {
  const double alpha = ctx.attrs.f("alpha", 0.01);
  unary_float(ctx, [alpha](auto x) {
    using T = decltype(x);
    return x < T(0) ? T(alpha) * x : x;
  });
}

void kernel_ThresholdedRelu(const KernelContext& ctx) {
  const double alpha = ctx.attrs.f("alpha", 1.0);
  unary_float(ctx, [alpha](auto x) {
    using T = decltype(x);
    return x > T(alpha) ? x : T(0);
  });
}

// ---- Cast and Clip

void kernel_Cast(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  dispatch_all(in.dtype, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch_all(out.dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      using S = typename CastElem<From>::storage;
      using D = typename CastElem<To>::storage;
      map_unary<S, D>(in, out, [](S v) { return narrow<To>(widen<From>(v)); });
    });
  });
}

void kernel_Clip(const KernelContext& ctx) {
  dispatch_arith(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = Compute<T>;
    C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
    if (ctx.has_input(1)) lo = load(*ctx.inputs[1].as<T>());
    if (ctx.has_input(2)) hi = load(*ctx.inputs[2].as<T>());
    // A NaN x or bound gives NaN, as in torch.clamp and numpy.clip.
    map_unary<T>(ctx.inputs[0], ctx.outputs[0],
                 [lo, hi](T v) { return store<T>(min_value(max_value(load(v), lo), hi)); });
  });
}

// ---- binary arithmetic

void kernel_Add(const KernelContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) { return a + b; });
}

void kernel_Sub(const KernelContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) { return a - b; });
}

void kernel_Mul(const KernelContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) { return a * b; });
}

void kernel_Div(const KernelContext& ctx) {
  dispatch_arith(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    check_nonzero_divisor<T>(ctx, ctx.inputs[1]);
  });
  binary_numeric(ctx, [](auto a, auto b) { return divide(a, b); });
}

void kernel_Mod(const KernelContext& ctx) {
  const bool c_fmod = ctx.attrs.i("fmod", 0) != 0;
  dispatch_arith(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    check_nonzero_divisor<T>(ctx, ctx.inputs[1]);
  });
  binary_numeric(ctx, [c_fmod](auto a, auto b) { return remainder(a, b, c_fmod); });
}

// The exponent may have another dtype than the base; the result has the base's.
void kernel_Pow(const KernelContext& ctx) {
  dispatch_arith(ctx.inputs[0].dtype, ctx, [&](auto base_tag) {
    using A = typename decltype(base_tag)::type;
    using CA = Compute<A>;
    dispatch_arith(ctx.inputs[1].dtype, ctx, [&](auto exp_tag) {
      using B = typename decltype(exp_tag)::type;
      using CB = Compute<B>;
      map_binary<A, B, A>(ctx.inputs[0], ctx.inputs[1], ctx.outputs[0], [](A a, B b) {
        const CA x = load(a);
        const CB y = load(b);
        if constexpr (std::is_floating_point_v<CA>) {
          return store<A>(CA(std::pow(x, CA(y))));
        } else if constexpr (std::is_integral_v<CB>) {
          return int_pow(x, int64_t(y));
        } else {
          return CA(float_to_int64(std::pow(double(x), double(y))));
        }
      });
    });
  });
}

void kernel_Max(const KernelContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) { return max_value(a, b); });
}

void kernel_Min(const KernelContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) { return min_value(a, b); });
}

void kernel_PRelu(const KernelContext& ctx) {
  binary_numeric(ctx, [](auto x, auto slope) { return x < decltype(x)(0) ? slope * x : x; });
}

// ---- logic and comparisons

void kernel_And(const KernelContext& ctx) {
  logical(ctx, [](bool a, bool b) { return a && b; });
}

void kernel_Or(const KernelContext& ctx) {
  logical(ctx, [](bool a, bool b) { return a || b; });
}

void kernel_Xor(const KernelContext& ctx) {
  logical(ctx, [](bool a, bool b) { return a != b; });
}

void kernel_Equal(const KernelContext& ctx) {
  compare(ctx, [](auto a, auto b) { return a == b; });
}

void kernel_Greater(const KernelContext& ctx) {
  compare(ctx, [](auto a, auto b) { return a > b; });
}

void kernel_GreaterOrEqual(const KernelContext& ctx) {
  compare(ctx, [](auto a, auto b) { return a >= b; });
}

void kernel_Less(const KernelContext& ctx) {
  compare(ctx, [](auto a, auto b) { return a < b; });
}

void kernel_LessOrEqual(const KernelContext& ctx) {
  compare(ctx, [](auto a, auto b) { return a <= b; });
}

void kernel_Where(const KernelContext& ctx) {
  const TensorView& c = ctx.inputs[0];
  const TensorView& x = ctx.inputs[1];
  const TensorView& y = ctx.inputs[2];
  const TensorView& out = ctx.outputs[0];
  dispatch_storage(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const uint8_t* pc = c.as<uint8_t>();
    const T* px = x.as<T>();
    const T* py = y.as<T>();
    T* po = out.as<T>();
    if (c.dims == out.dims && x.dims == out.dims && y.dims == out.dims) {
      const int64_t n = out.numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
      for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? px[i] : py[i];
      return;
    }
    for_each_broadcast_row<3>(
        out.dims, {&c.dims, &x.dims, &y.dims},
        [&](int64_t o, const std::array<int64_t, 3>& off, const std::array<int64_t, 3>& st, int64_t n) {
          for (int64_t j = 0; j < n; ++j)
            po[o + j] = pc[off[0] + j * st[0]] ? px[off[1] + j * st[1]] : py[off[2] + j * st[2]];
        });
  });
}

}  // namespace dlc::cpu
