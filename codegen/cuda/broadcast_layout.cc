// Collapsed broadcast index arithmetic of elementwise kernels (broadcast_layout.h).
#include "codegen/cuda/broadcast_layout.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::codegen::cuda {

BroadcastLayout broadcast_layout(const Shape& out, const std::vector<Shape>& operands) {
  const size_t rank = out.size();
  // Per operand, strides over the output's dims (right-aligned numpy broadcasting).
  std::vector<std::vector<int64_t>> full(operands.size(), std::vector<int64_t>(rank, 0));
  for (size_t k = 0; k < operands.size(); ++k) {
    const Shape& in = operands[k];
    if (in.size() > rank)
      throw Error(fmt::format("broadcast: {} has more dims than {}", shape_str(in), shape_str(out)));
    int64_t stride = 1;
    for (size_t j = in.size(); j-- > 0;) {
      const size_t d = rank - in.size() + j;
      if (in[j] != out[d] && in[j] != 1)
        throw Error(fmt::format("broadcast: {} does not broadcast to {}", shape_str(in), shape_str(out)));
      full[k][d] = in[j] == 1 ? 0 : stride;
      stride *= in[j];
    }
  }

  BroadcastLayout layout;
  layout.strides.assign(operands.size(), {});
  const int64_t numel = num_elements(out);
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1 && numel != 0) continue;  // size-1 dims move nothing
    const bool merge = !layout.dims.empty() && [&] {
      for (size_t k = 0; k < operands.size(); ++k)
        if (layout.strides[k].back() != full[k][d] * out[d]) return false;
      return true;
    }();
    if (merge) {
      layout.dims.back() *= out[d];
      for (size_t k = 0; k < operands.size(); ++k) layout.strides[k].back() = full[k][d];
    } else {
      layout.dims.push_back(out[d]);
      for (size_t k = 0; k < operands.size(); ++k) layout.strides[k].push_back(full[k][d]);
    }
  }
  if (layout.dims.empty()) {  // a single element
    layout.dims = {1};
    for (auto& s : layout.strides) s = {0};
  }

  // Contiguous strides of the collapsed output, to recognize operands read like the output.
  std::vector<int64_t> contiguous(layout.dims.size(), 1);
  for (size_t d = layout.dims.size() - 1; d-- > 0;) contiguous[d] = contiguous[d + 1] * layout.dims[d + 1];
  for (size_t k = 0; k < operands.size(); ++k) {
    const bool scalar = num_elements(operands[k]) == 1;
    if (scalar) {
      layout.access.push_back(Access::Scalar);
      continue;
    }
    bool same = true;
    for (size_t d = 0; d < layout.dims.size(); ++d)
      if (layout.dims[d] != 1 && layout.strides[k][d] != contiguous[d]) same = false;
    layout.access.push_back(same || numel == 0 ? Access::Full : Access::Strided);
  }
  return layout;
}

std::string strided_offset(const Shape& dims, const std::vector<int64_t>& strides) {
  std::string s;
  int64_t pitch = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (strides[d] != 0 && dims[d] != 1) {
      std::string coord = pitch == 1 ? "i" : fmt::format("i / {}", pitch);
      if (d > 0)
        coord = pitch == 1 ? fmt::format("i % {}", dims[d]) : fmt::format("(i / {}) % {}", pitch, dims[d]);
      const std::string term = strides[d] == 1 ? coord : fmt::format("({}) * {}", coord, strides[d]);
      s = s.empty() ? term : term + " + " + s;
    }
    pitch *= dims[d];
  }
  return s.empty() ? "0" : s;
}

std::string operand_offset(const BroadcastLayout& layout, size_t k) {
  return layout.access[k] == Access::Full     ? "i"
         : layout.access[k] == Access::Scalar ? "0"
                                              : strided_offset(layout.dims, layout.strides[k]);
}

}  // namespace dlc::codegen::cuda
