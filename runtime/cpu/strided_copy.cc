// Strided element copies.
#include "runtime/cpu/strided_copy.h"

#include <algorithm>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/row_counter.h"

namespace dlc::cpu {

namespace {

struct CopyPlan {
  Shape dims, out_strides, in_strides;
};

// Drops unit dims and merges neighbours that are contiguous in both operands.
CopyPlan simplify(const Shape& dims, const Shape& os, const Shape& is) {
  CopyPlan p;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (!p.dims.empty() && p.out_strides.back() == os[d] * dims[d] &&
        p.in_strides.back() == is[d] * dims[d]) {
      p.dims.back() *= dims[d];
      p.out_strides.back() = os[d];
      p.in_strides.back() = is[d];
    } else {
      p.dims.push_back(dims[d]);
      p.out_strides.push_back(os[d]);
      p.in_strides.push_back(is[d]);
    }
  }
  if (p.dims.empty()) p = {{1}, {1}, {1}};
  return p;
}

}  // namespace

Shape row_major_strides(const Shape& dims) {
  Shape s(dims.size(), 1);
  for (int64_t d = int64_t(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

void strided_copy(DType dtype, const Shape& dims, void* out, const Shape& os, const void* in,
                  const Shape& is) {
  if (num_elements(dims) == 0) return;
  const CopyPlan p = simplify(dims, os, is);
  const int64_t inner = p.dims.back();
  const int64_t rows = num_elements(p.dims) / inner;
  const int64_t o_inner = p.out_strides.back(), i_inner = p.in_strides.back();
  const bool contiguous = o_inner == 1 && i_inner == 1;
  const int64_t bytes = num_elements(p.dims) * int64_t(dtype_size(dtype));
  dispatch_storage(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = static_cast<T*>(out);
    const T* i = static_cast<const T*>(in);
    const Shape outer(p.dims.begin(), p.dims.end() - 1);
    parallel_chunks(rows, bytes > kParallelCopyBytes ? 1 : rows, [&](int64_t r0, int64_t r1) {
      RowCounter<2> counter(outer, {&p.out_strides, &p.in_strides}, r0);
      for (int64_t r = r0; r < r1; ++r, counter.next()) {
        T* op = o + counter.offset(0);
        const T* ip = i + counter.offset(1);
        if (contiguous) {
#pragma omp simd
          for (int64_t j = 0; j < inner; ++j) op[j] = ip[j];
        } else {
          for (int64_t j = 0; j < inner; ++j) op[j * o_inner] = ip[j * i_inner];
        }
      }
    });
  });
}

void transposed_copy(DType dtype, const Shape& in_dims, const void* in, const Shape& perm, void* out) {
  const Shape in_strides = row_major_strides(in_dims);
  Shape out_dims, gathered;
  for (int64_t p : perm) {
    out_dims.push_back(in_dims[size_t(p)]);
    gathered.push_back(in_strides[size_t(p)]);
  }
  strided_copy(dtype, out_dims, out, row_major_strides(out_dims), in, gathered);
}

}  // namespace dlc::cpu
