// Index operands.
#include "runtime/cpu/indices.h"

#include <algorithm>

namespace dlc::cpu {

std::vector<int64_t> read_indices(const KernelContext& ctx, const TensorView& v, const char* what) {
  std::vector<int64_t> idx(size_t(v.numel()));
  if (v.dtype == DType::I64)
    std::copy_n(v.as<int64_t>(), idx.size(), idx.begin());
  else if (v.dtype == DType::I32)
    std::copy_n(v.as<int32_t>(), idx.size(), idx.begin());
  else
    ctx.fail("{} must be i32 or i64, got {}", what, dtype_name(v.dtype));
  return idx;
}

int64_t wrap_index(const KernelContext& ctx, int64_t i, int64_t bound) {
  if (i < -bound || i >= bound) ctx.fail("index {} is out of range [{}, {})", i, -bound, bound);
  return i < 0 ? i + bound : i;
}

}  // namespace dlc::cpu
