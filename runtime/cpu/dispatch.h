// Dtype dispatch for kernels: calls a generic lambda with a tag carrying the C++ element type.
//
//   dispatch_numeric(view.dtype, ctx, [&](auto tag) { using T = typename decltype(tag)::type; … });
#pragma once

#include <cstdint>

#include "dlc/half.h"
#include "runtime/cpu/kernel.h"

namespace dlc::cpu {

template <typename T>
struct TypeTag {
  using type = T;
};

/// f32, f64, i64, i32, i8, u8.
template <typename F>
void dispatch_numeric(DType t, const KernelContext& ctx, F&& f) {
  switch (t) {
    case DType::F32:
      return f(TypeTag<float>{});
    case DType::F64:
      return f(TypeTag<double>{});
    case DType::I64:
      return f(TypeTag<int64_t>{});
    case DType::I32:
      return f(TypeTag<int32_t>{});
    case DType::I8:
      return f(TypeTag<int8_t>{});
    case DType::U8:
      return f(TypeTag<uint8_t>{});
    default:
      ctx.fail("dtype {} is not supported", dtype_name(t));
  }
}

/// f32, f64.
template <typename F>
void dispatch_float(DType t, const KernelContext& ctx, F&& f) {
  switch (t) {
    case DType::F32:
      return f(TypeTag<float>{});
    case DType::F64:
      return f(TypeTag<double>{});
    default:
      ctx.fail("dtype {} is not supported", dtype_name(t));
  }
}

/// f16 and bf16 as Half / BFloat16; every other dtype goes to `narrower(f)`, a dispatch of its own.
template <typename F, typename Narrower>
void with_half_types(DType t, F&& f, Narrower&& narrower) {
  switch (t) {
    case DType::F16:
      return f(TypeTag<Half>{});
    case DType::BF16:
      return f(TypeTag<BFloat16>{});
    default:
      return narrower(f);
  }
}

/// f32, f64, f16, bf16 (the 16-bit types as Half / BFloat16).
template <typename F>
void dispatch_float_ext(DType t, const KernelContext& ctx, F&& f) {
  with_half_types(t, f, [&](auto& g) { dispatch_float(t, ctx, g); });
}

/// The numeric dtypes of dispatch_numeric plus f16 and bf16.
template <typename F>
void dispatch_arith(DType t, const KernelContext& ctx, F&& f) {
  with_half_types(t, f, [&](auto& g) { dispatch_numeric(t, ctx, g); });
}

/// Every dtype (f16/bf16 as Half/BFloat16, bool as bool): for casts.
template <typename F>
void dispatch_all(DType t, F&& f) {
  switch (t) {
    case DType::F32:
      return f(TypeTag<float>{});
    case DType::F64:
      return f(TypeTag<double>{});
    case DType::F16:
      return f(TypeTag<Half>{});
    case DType::BF16:
      return f(TypeTag<BFloat16>{});
    case DType::I64:
      return f(TypeTag<int64_t>{});
    case DType::I32:
      return f(TypeTag<int32_t>{});
    case DType::I8:
      return f(TypeTag<int8_t>{});
    case DType::U8:
      return f(TypeTag<uint8_t>{});
    case DType::Bool:
      return f(TypeTag<bool>{});
  }
}

/// Every dtype, by storage (bool as uint8_t, f16/bf16 as uint16_t): for data movement.
template <typename F>
void dispatch_storage(DType t, F&& f) {
  switch (dtype_size(t)) {
    case 1:
      return f(TypeTag<uint8_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    default:
      return f(TypeTag<uint64_t>{});
  }
}

}  // namespace dlc::cpu
