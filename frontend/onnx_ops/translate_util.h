// Helpers the ONNX op translators share: the same-named IR op, axis resolution, Reshape,
// Transpose, Cast, Slice and binary-op emission, Softmax's axis convention, dimension products.
#pragma once

#include <functional>

#include "frontend/import_context.h"

namespace dlc::frontend {

/// The IR op named as the node's ONNX op type; fails if there is none.
ir::OpKind same_named_op(const ImportContext& ctx);
/// `axis` in [-rank, rank) (or [-rank, rank] with `inclusive`), made non-negative; fails naming
/// the node otherwise.
int64_t resolve_axis(const ImportContext& ctx, int64_t axis, int64_t rank, bool inclusive = false);
/// `v` reshaped to `shape`.
ir::Value* reshape(ImportContext& ctx, ir::Value* v, const Shape& shape);
/// `v` with its axes permuted by `perm`.
ir::Value* transpose(ImportContext& ctx, ir::Value* v, const Shape& perm);
/// The dtype an ONNX type attribute (Cast's `to`, EyeLike's `dtype`) names; fails if it is absent
/// or names a type dlc has not.
DType dtype_attr(const ImportContext& ctx, const std::string& name);
/// `v` converted to `to` (itself when it already has that dtype).
ir::Value* cast_to(ImportContext& ctx, ir::Value* v, DType to);
/// Applies `op_along(x, axis)` to input 0 where Softmax, LogSoftmax and Hardmax apply it: from
/// opset 13 along `axis` (default -1); before, over the input coerced to 2-D
/// [prod(dims[:axis]), prod(dims[axis:])] (default axis 1) along its second axis, reshaped back.
ir::Value* along_softmax_axis(ImportContext& ctx,
                              const std::function<ir::Value*(ir::Value* x, int64_t axis)>& op_along);
/// op(a, b).
ir::Value* binary(ImportContext& ctx, ir::OpKind op, ir::Value* a, ir::Value* b);
/// v[start:end] along `axis`.
ir::Value* slice(ImportContext& ctx, ir::Value* v, int64_t axis, int64_t start, int64_t end);
/// A constant of `dtype` and `shape` with every element `value`.
ir::Value* filled(ImportContext& ctx, DType dtype, const Shape& shape, double value, const std::string& hint);
/// The i64 index `i` into an axis of `extent`, counted from the end where negative.
ir::Value* from_end(ImportContext& ctx, ir::Value* i, int64_t extent);
/// The product of the dims in [begin, end).
int64_t product(Shape::const_iterator begin, Shape::const_iterator end);

}  // namespace dlc::frontend
