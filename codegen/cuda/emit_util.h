// Helpers shared by the CUDA kernel emitters: element type names, literals, index types, launch
// arithmetic, kernel names, and the ${NAME} template filler every emitter writes its code with.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlc/dtype.h"
#include "dlc/tensor.h"

namespace dlc::codegen::cuda {

/// The element types kernels store floating-point tensors in; arithmetic is always f32.
bool is_storage_float(DType t);  // f32, f16, bf16
/// Throws dlc::Error "WHAT: dtype X is not supported by the CUDA kernels (f32, f16, bf16)".
void require_storage_float(DType t, std::string_view what);
/// Throws dlc::Error unless `t` is i32 or i64 (label and index tensors).
void require_index_type(DType t, std::string_view what);

/// The CUDA C++ type of an element: float, __half, __nv_bfloat16, unsigned char (bool, u8), int,
/// long long. Throws for f64 and i8.
std::string_view cuda_type(DType t);

/// A float literal that reads back as exactly float(v): "0.9f", "1.0f". Infinities and NaN become
/// calls of the prelude's dlc_inf() / dlc_nan(), which are not constant expressions.
std::string float_literal(double v);
/// A double literal that reads back as exactly v: "0.999", "1.0" (non-finite values as above).
std::string double_literal(double v);

/// "int" when indices up to `max_index` (plus a grid's stride) fit 32 bits, else "long long".
std::string_view index_type(int64_t max_index);

/// Blocks for `work` items at `per_block` items a block, at least 1 and at most 2^20 (the kernels
/// loop grid-stride over the rest).
int64_t grid_for(int64_t work, int64_t per_block);

/// Statements declaring `const Index o<d>` for each axis d of `dims` but `skipped_axis`: the
/// coordinates of the row-major flat index `i` (through a local `Index rest`), indented four
/// spaces. Empty for rank 0.
std::string coordinate_decls(const Shape& dims, int64_t skipped_axis = -1);

/// `v` as an expression of type T for storage type `t` (a float through dlc_from_float, a bool as
/// T(0) or T(1), an integer truncated).
std::string storage_value(DType t, double v);

/// `axis` of a rank-`rank` tensor counted from the front (a negative axis counts from the end;
/// axis 0 of a scalar is allowed). Throws dlc::Error for an axis out of range.
int64_t normalized_axis(int64_t axis, int64_t rank);

/// `dims` as [outer, extent, inner] around the adjacent axes [first, last] (normalized; last <
/// first: no axis): the products of the dims before them, their own and those after them.
struct AxisView {
  int64_t outer = 1, extent = 1, inner = 1;
};
AxisView axes_view(const Shape& dims, int64_t first, int64_t last);
/// axes_view around the one axis `axis` (negative counts from the end; normalized_axis's errors).
AxisView axis_view(const Shape& dims, int64_t axis);
/// Sets a row kernel spec's outer, extent and inner from `v`.
template <typename Spec>
void set_view(Spec& spec, const AxisView& v) {
  spec.outer = v.outer;
  spec.extent = v.extent;
  spec.inner = v.inner;
}

/// "4096x1000": dims joined for kernel names.
std::string dims_tag(const Shape& dims);
/// The kernel name "dlc_KIND_DTYPE_DETAIL" (DETAIL omitted when empty).
std::string kernel_name(std::string_view kind, DType dtype, std::string_view detail);

using TemplateVars = std::vector<std::pair<std::string, std::string>>;
/// `tmpl` with every "${NAME}" replaced by its value in `vars`. Throws dlc::Error for a placeholder
/// without a value and for a value no placeholder uses (both are emitter bugs).
std::string fill(std::string_view tmpl, const TemplateVars& vars);

}  // namespace dlc::codegen::cuda
