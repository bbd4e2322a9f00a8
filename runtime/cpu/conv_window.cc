// The shared convolution window of the oneDNN convolution kernels.
#include "runtime/cpu/conv_window.h"

#include <algorithm>

namespace dlc::cpu {

ConvWindow conv_window(const KernelContext& ctx, bool transposed) {
  const size_t spatial = ctx.inputs[0].dims.size() - 2;
  const Attrs& a = ctx.attrs;
  const Shape strides = a.ints("strides", Shape(spatial, 1));
  const Shape pads = a.ints("pads", Shape(2 * spatial, 0));
  const Shape dil = a.ints("dilations", Shape(spatial, 1));
  const Shape opad = transposed ? a.ints("output_padding", Shape(spatial, 0)) : Shape(spatial, 0);
  if (strides.size() != spatial || pads.size() != 2 * spatial || dil.size() != spatial ||
      opad.size() != spatial)
    ctx.fail("window attributes do not match the input {}", shape_str(ctx.inputs[0].dims));
  ConvWindow w;
  w.group = a.i("group", 1);
  for (size_t i = 0; i < spatial; ++i) {
    w.strides.push_back(strides[i]);
    w.dilates.push_back(dil[i] - 1);
    w.pad_l.push_back(pads[i]);
    // output_padding adds rows at the end: a negative right padding for the deconvolution.
    w.pad_r.push_back(pads[i + spatial] - opad[i]);
  }
  return w;
}

dnnl::memory::desc conv_weight_desc(const Shape& weight_dims, DType dtype, int64_t group, bool transposed) {
  Shape dims = weight_dims;
  if (group > 1) {
    dims[0] /= group;
    dims.insert(dims.begin(), group);
  }
  Shape st = onednn::row_major_strides(dims);
  if (transposed) {
    const size_t o = group > 1 ? 1 : 0;
    std::swap(dims[o], dims[o + 1]);
    std::swap(st[o], st[o + 1]);
  }
  return onednn::strided_desc(dims, st, dtype);
}

}  // namespace dlc::cpu
