// Stride computation for broadcast.h.
#include "runtime/cpu/broadcast.h"

namespace dlc::cpu {

Shape broadcast_strides(const Shape& in, const Shape& out) {
  Shape strides(out.size(), 0);
  int64_t s = 1;
  for (int64_t i = int64_t(in.size()) - 1, o = int64_t(out.size()) - 1; i >= 0; --i, --o) {
    strides[o] = in[i] == 1 ? 0 : s;
    s *= in[i];
  }
  return strides;
}

}  // namespace dlc::cpu
