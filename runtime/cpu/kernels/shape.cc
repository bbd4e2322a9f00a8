// CPU kernels of the shape family. They move elements by storage size, so every dtype works;
// shapes come from the preallocated outputs, attributes only say where to read. Most kernels are
// one strided copy (strided_copy.h).
#include <algorithm>
#include <cstring>

#include "runtime/cpu/broadcast.h"
#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/indices.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/slice_view.h"
#include "runtime/cpu/strided_copy.h"

namespace dlc::cpu {

namespace {

// Copies a view whose strides are `in_strides` (elements) into the contiguous output.
void gather_into(const TensorView& out, const void* in, const Shape& in_strides) {
  strided_copy(out.dtype, out.dims, out.data, row_major_strides(out.dims), in, in_strides);
}

int64_t norm_axis(const KernelContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) ctx.fail("axis {} is out of range for rank {}", axis, rank);
  return axis < 0 ? axis + rank : axis;
}

int64_t prod(const Shape& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t d = begin; d < end; ++d) n *= dims[d];
  return n;
}

// Splits (or, with `join`, concatenates) along `axis`: part k is the slab of `parts[k]` at its
// running offset in `whole`.
void concat_or_split(const KernelContext& ctx, const TensorView& whole, const std::vector<TensorView>& parts,
                     int64_t axis, bool join) {
  const int64_t outer = prod(whole.dims, 0, size_t(axis));
  const int64_t inner = prod(whole.dims, size_t(axis) + 1, whole.dims.size());
  const int64_t whole_row = whole.dims[axis] * inner;
  const size_t esize = dtype_size(whole.dtype);
  int64_t offset = 0;
  for (const TensorView& part : parts) {
    const int64_t part_row = part.dims[axis] * inner;
    if (part.dtype != whole.dtype)
      ctx.fail("dtypes differ: {} and {}", dtype_name(part.dtype), dtype_name(whole.dtype));
    auto* w = static_cast<uint8_t*>(whole.data) + size_t(offset) * esize;
    if (part.data && part_row) {
      if (join)
        strided_copy(whole.dtype, {outer, part_row}, w, {whole_row, 1}, part.data, {part_row, 1});
      else
        strided_copy(whole.dtype, {outer, part_row}, part.data, {part_row, 1}, w, {whole_row, 1});
    }
    offset += part_row;
  }
}

}  // namespace

void kernel_Identity(const KernelContext& ctx) {
  std::memcpy(ctx.outputs[0].data, ctx.inputs[0].data, ctx.inputs[0].bytes());
}

void kernel_Reshape(const KernelContext& ctx) { kernel_Identity(ctx); }

void kernel_Transpose(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  const int64_t rank = in.rank();
  Shape perm = ctx.attrs.ints("perm", {});
  if (perm.empty())
    for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
  if (int64_t(perm.size()) != rank) ctx.fail("perm has {} entries for rank {}", perm.size(), rank);
  for (int64_t& p : perm) p = norm_axis(ctx, p, rank);
  transposed_copy(in.dtype, in.dims, in.data, perm, ctx.outputs[0].data);
}

void kernel_Expand(const KernelContext& ctx) {
  gather_into(ctx.outputs[0], ctx.inputs[0].data, broadcast_strides(ctx.inputs[0].dims, ctx.outputs[0].dims));
}

// Output axis d of size r_d·n_d is the pair (repeat, index): a copy over [r0,n0,r1,n1,…] with
// stride 0 on the repeats.
void kernel_Tile(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  const Shape strides = row_major_strides(in.dims);
  Shape dims, in_strides;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.dims[d] == 0) return;
    dims.insert(dims.end(), {out.dims[d] / in.dims[d], in.dims[d]});
    in_strides.insert(in_strides.end(), {0, strides[d]});
  }
  strided_copy(out.dtype, dims, out.data, row_major_strides(dims), in.data, in_strides);
}

void kernel_Slice(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  if (out.numel() == 0) return;
  const SliceView view = slice_view(ctx, in.dims, out.dims);
  gather_into(out, static_cast<const uint8_t*>(in.data) + view.offset * int64_t(dtype_size(in.dtype)),
              view.strides);
}

void kernel_Concat(const KernelContext& ctx) {
  const TensorView& out = ctx.outputs[0];
  concat_or_split(ctx, out, ctx.inputs, norm_axis(ctx, ctx.attrs.i("axis"), out.rank()), true);
}

void kernel_Split(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  concat_or_split(ctx, in, ctx.outputs, norm_axis(ctx, ctx.attrs.i("axis", 0), in.rank()), false);
}

// Each output axis gets a table of source indices (-1: the constant value); rows whose outer
// indices are all in range read through the innermost table.
void kernel_Pad(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  const int64_t rank = in.rank();
  const Shape& pads = ctx.attrs.ints("pads");
  const std::string mode = ctx.attrs.s("mode", "constant");
  if (int64_t(pads.size()) != 2 * rank) ctx.fail("pads has {} entries for rank {}", pads.size(), rank);
  if (mode != "constant" && mode != "reflect" && mode != "edge") ctx.fail("unknown mode '{}'", mode);
  if (out.numel() == 0) return;
  std::vector<std::vector<int64_t>> table(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = in.dims[d];
    for (int64_t o = 0; o < out.dims[d]; ++o) {
      int64_t i = o - pads[d];
      if (i < 0 || i >= n) {
        if (mode == "constant")
          i = -1;
        else if (n == 0)
          ctx.fail("cannot {}-pad axis {} of size 0", mode, d);
        else if (mode == "edge")
          i = std::clamp<int64_t>(i, 0, n - 1);
        else if (n == 1)
          i = 0;
        else {
          const int64_t period = 2 * (n - 1);
          i = ((i % period) + period) % period;
          if (i >= n) i = period - i;
        }
      }
      table[d].push_back(i);
    }
  }
  const Tensor value = Tensor::from_double(out.dtype, {ctx.attrs.f("value", 0.0)}, {});
  const Shape in_strides = row_major_strides(in.dims);
  const int64_t inner = rank ? out.dims[rank - 1] : 1;
  const int64_t rows = out.numel() / inner;
  dispatch_storage(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T fill;
    std::memcpy(&fill, value.bytes.data(), sizeof(T));
    const T* src = in.as<const T>();
    T* dst = out.as<T>();
    const int64_t* last = rank ? table[rank - 1].data() : nullptr;
#pragma omp parallel for schedule(static) if (out.bytes() > size_t(kParallelCopyBytes))
    for (int64_t r = 0; r < rows; ++r) {
      int64_t base = 0, rem = r;
      bool inside = true;
      for (int64_t d = rank - 2; d >= 0; --d) {
        const int64_t i = table[d][rem % out.dims[d]];
        rem /= out.dims[d];
        if (i < 0) inside = false;
        base += i * in_strides[d];
      }
      T* row = dst + r * inner;
      if (!inside) {
        std::fill_n(row, inner, fill);
      } else if (!last) {
        row[0] = src[0];
      } else {
        for (int64_t j = 0; j < inner; ++j) row[j] = last[j] < 0 ? fill : src[base + last[j]];
      }
    }
  });
}

void kernel_Gather(const KernelContext& ctx) {
  const TensorView& data = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  const int64_t axis = norm_axis(ctx, ctx.attrs.i("axis", 0), data.rank());
  std::vector<int64_t> idx = read_indices(ctx, ctx.inputs[1]);
  for (int64_t& i : idx) i = wrap_index(ctx, i, data.dims[axis]);
  const int64_t outer = prod(data.dims, 0, size_t(axis));
  const size_t slab = size_t(prod(data.dims, size_t(axis) + 1, data.dims.size())) * dtype_size(data.dtype);
  const int64_t n = int64_t(idx.size()), axis_dim = data.dims[axis];
  const auto* src = static_cast<const uint8_t*>(data.data);
  auto* dst = static_cast<uint8_t*>(out.data);
#pragma omp parallel for collapse(2) schedule(static) if (out.bytes() > size_t(kParallelCopyBytes))
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      std::memcpy(dst + size_t(o * n + k) * slab, src + size_t(o * axis_dim + idx[k]) * slab, slab);
}

void kernel_GatherElements(const KernelContext& ctx) {
  const TensorView& data = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  const int64_t rank = data.rank();
  const int64_t axis = norm_axis(ctx, ctx.attrs.i("axis", 0), rank);
  std::vector<int64_t> idx = read_indices(ctx, ctx.inputs[1]);
  for (int64_t& i : idx) i = wrap_index(ctx, i, data.dims[axis]);
  const Shape in_strides = row_major_strides(data.dims);
  const int64_t n = out.numel();
  dispatch_storage(data.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = data.as<const T>();
    T* dst = out.as<T>();
#pragma omp parallel for schedule(static) if (n > 32768)
    for (int64_t p = 0; p < n; ++p)
      dst[p] = src[gather_elements_offset(p, idx[p], out.dims, in_strides, axis)];
  });
}

void kernel_GatherND(const KernelContext& ctx) {
  const TensorView& data = ctx.inputs[0];
  const TensorView& indices = ctx.inputs[1];
  const TensorView& out = ctx.outputs[0];
  const int64_t b = ctx.attrs.i("batch_dims", 0);
  const int64_t k = indices.rank() ? indices.dims.back() : 0;
  if (b < 0 || b + k > data.rank() || indices.rank() < b + 1)
    ctx.fail("batch_dims {} and index depth {} do not fit data rank {}", b, k, data.rank());
  const Shape strides = row_major_strides(data.dims);
  const int64_t batches = prod(data.dims, 0, size_t(b));
  const int64_t batch_stride = prod(data.dims, size_t(b), data.dims.size());
  const int64_t tuples = prod(indices.dims, size_t(b), indices.dims.size() - 1);
  const int64_t slab_elems = prod(data.dims, size_t(b + k), data.dims.size());
  std::vector<int64_t> idx = read_indices(ctx, indices);
  std::vector<int64_t> offsets(size_t(batches * tuples));
  for (int64_t t = 0; t < batches * tuples; ++t) {
    int64_t off = (t / tuples) * batch_stride;
    for (int64_t j = 0; j < k; ++j) off += wrap_index(ctx, idx[t * k + j], data.dims[b + j]) * strides[b + j];
    offsets[t] = off;
  }
  const size_t esize = dtype_size(data.dtype), slab = size_t(slab_elems) * esize;
  const auto* src = static_cast<const uint8_t*>(data.data);
  auto* dst = static_cast<uint8_t*>(out.data);
#pragma omp parallel for schedule(static) if (out.bytes() > size_t(kParallelCopyBytes))
  for (int64_t t = 0; t < int64_t(offsets.size()); ++t)
    std::memcpy(dst + size_t(t) * slab, src + size_t(offsets[t]) * esize, slab);
}

// Keeps column j of row i where j - i >= k (upper) or j - i <= k (lower); zeros the rest.
void kernel_Trilu(const KernelContext& ctx) {
  const TensorView& in = ctx.inputs[0];
  const TensorView& out = ctx.outputs[0];
  if (in.rank() < 2) ctx.fail("expects rank >= 2, got {}", shape_str(in.dims));
  const bool upper = ctx.attrs.i("upper", 1) != 0;
  const int64_t k = ctx.attrs.i("k", 0);
  const int64_t n = in.dims[in.rank() - 2], m = in.dims[in.rank() - 1];
  if (n == 0 || m == 0) return;
  const int64_t rows = in.numel() / m;
  const size_t esize = dtype_size(in.dtype);
  const auto* src = static_cast<const uint8_t*>(in.data);
  auto* dst = static_cast<uint8_t*>(out.data);
#pragma omp parallel for schedule(static) if (out.bytes() > size_t(kParallelCopyBytes))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r % n;
    // Columns [lo, hi) are kept.
    const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, m) : 0;
    const int64_t hi = upper ? m : std::clamp<int64_t>(i + k + 1, 0, m);
    const size_t row = size_t(r * m) * esize;
    std::memset(dst + row, 0, size_t(m) * esize);
    if (hi > lo)
      std::memcpy(dst + row + size_t(lo) * esize, src + row + size_t(lo) * esize, size_t(hi - lo) * esize);
  }
}

}  // namespace dlc::cpu
