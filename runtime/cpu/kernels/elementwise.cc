// CPU kernels of the elementwise family: unary maps, broadcasting binary ops, comparisons,
// logic, Where, Clip and Cast.
#include <cmath>

#include "dlc/half.h"
#include "runtime/cpu/broadcast.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

namespace {

template <typename T, typename F>
void map_unary(const TensorView& in, const TensorView& out, F&& f) {
  const T* x = in.as<T>();
  T* y = out.as<T>();
  const int64_t n = in.numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// A unary op on floating-point tensors; f is a generic lambda over the element type.
template <typename F>
void unary_float(KernelContext& ctx, F&& f) {
  dispatch_float(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_unary<T>(ctx.inputs[0], ctx.outputs[0], [&](T v) { return T(f(v)); });
  });
}

// A unary op on any numeric tensor.
template <typename F>
void unary_numeric(KernelContext& ctx, F&& f) {
  dispatch_numeric(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_unary<T>(ctx.inputs[0], ctx.outputs[0], [&](T v) { return T(f(v)); });
  });
}

// out[i] = f(a[ia], b[ib]) with broadcasting; In and Out element types given.
template <typename In, typename Out, typename F>
void map_binary(const TensorView& a, const TensorView& b, const TensorView& out, F&& f) {
  const In* pa = a.as<In>();
  const In* pb = b.as<In>();
  Out* po = out.as<Out>();
  if (a.dims == out.dims && b.dims == out.dims) {
    const int64_t n = out.numel();
#pragma omp parallel for simd schedule(static) if (n > 65536)
    for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    return;
  }
  for_each_broadcast_row<2>(out.dims, {&a.dims, &b.dims},
                            [&](int64_t o, const std::array<int64_t, 2>& off,
                                const std::array<int64_t, 2>& st, int64_t n) {
                              const In* ra = pa + off[0];
                              const In* rb = pb + off[1];
                              for (int64_t j = 0; j < n; ++j) po[o + j] = f(ra[j * st[0]], rb[j * st[1]]);
                            });
}

template <typename F>
void binary_numeric(KernelContext& ctx, F&& f) {
  dispatch_numeric(ctx.inputs[0].dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_binary<T, T>(ctx.inputs[0], ctx.inputs[1], ctx.outputs[0], [&](T a, T b) { return T(f(a, b)); });
  });
}

template <typename F>
void compare(KernelContext& ctx, F&& f) {
  auto t = ctx.inputs[0].dtype;
  if (t == DType::Bool) t = DType::U8;
  dispatch_numeric(t, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map_binary<T, uint8_t>(ctx.inputs[0], ctx.inputs[1], ctx.outputs[0],
                           [&](T a, T b) { return uint8_t(f(a, b) ? 1 : 0); });
  });
}

template <typename F>
void logical(KernelContext& ctx, F&& f) {
  map_binary<uint8_t, uint8_t>(ctx.inputs[0], ctx.inputs[1], ctx.outputs[0],
                               [&](uint8_t a, uint8_t b) { return uint8_t(f(a != 0, b != 0) ? 1 : 0); });
}

}  // namespace

void kernel_Add(KernelContext& ctx) {
  binary_numeric(ctx, [](auto a, auto b) { return a + b; });
}

void kernel_Relu(KernelContext& ctx) {
  unary_numeric(ctx, [](auto v) { return v > decltype(v)(0) ? v : decltype(v)(0); });
}

void kernel_Name(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Abs(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Acos(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Acosh(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Asin(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Asinh(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Atan(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Atanh(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Ceil(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Celu(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Cos(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Cosh(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Elu(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Erf(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Exp(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Floor(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_HardSigmoid(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_HardSwish(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_LeakyRelu(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Log(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Mish(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Neg(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Not(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Reciprocal(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Round(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Selu(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Sigmoid(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Sign(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Sin(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Sinh(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Softplus(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Softsign(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Sqrt(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Tan(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Tanh(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_ThresholdedRelu(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Cast(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Clip(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Sub(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Mul(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Div(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Pow(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Mod(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Max(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Min(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_PRelu(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_And(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Or(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Xor(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Equal(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Greater(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_GreaterOrEqual(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Less(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_LessOrEqual(KernelContext& ctx) { ctx.fail("not implemented yet"); }
void kernel_Where(KernelContext& ctx) { ctx.fail("not implemented yet"); }

}  // namespace dlc::cpu
