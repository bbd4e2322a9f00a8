// cuDNN window geometry (window_geometry.h).
#include "codegen/cuda/window_geometry.h"

#include <fmt/format.h>

#include "dlc/channels_last.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {

WindowGeometry window_geometry(const Attrs& params, const Shape& in, const Shape& out, const Shape& window,
                               const std::string& what) {
  const size_t spatial = window.size();
  if (in.size() != spatial + 2 || out.size() != spatial + 2 || spatial == 0)
    throw Error(fmt::format("{}: window {} does not fit input {} and result {}", what, shape_str(window),
                            shape_str(in), shape_str(out)));
  const Shape strides = params.ints("strides", Shape(spatial, 1));
  const Shape pads = params.ints("pads", Shape(2 * spatial, 0));
  const Shape dilations = params.ints("dilations", Shape(spatial, 1));
  if (strides.size() != spatial || pads.size() != 2 * spatial || dilations.size() != spatial)
    throw Error(fmt::format("{}: strides, pads or dilations do not have {} spatial dims", what, spatial));
  WindowGeometry g;
  g.groups = int(params.i("group", 1));
  bool symmetric_fits = true;
  std::vector<int> ends;  // the end padding, a ceil-mode window's included
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t extent = dilations[d] * (window[d] - 1) + 1;
    int64_t end = pads[d + spatial];
    const int64_t padded = (in[d + 2] + pads[d] + end - extent) / strides[d] + 1;
    // ceil_mode: the last window may run past the end padding; pad to its end.
    if (out[d + 2] > padded && params.i("ceil_mode", 0) != 0)
      end = (out[d + 2] - 1) * strides[d] + extent - in[d + 2] - pads[d];
    if (out[d + 2] != (in[d + 2] + pads[d] + end - extent) / strides[d] + 1)
      throw Error(fmt::format("{}: spatial dim {} has {} results, and its padding ({} and {}) gives {}", what,
                              d, out[d + 2], pads[d], pads[d + spatial], padded));
    ends.push_back(int(end));
    symmetric_fits = symmetric_fits && out[d + 2] == (in[d + 2] + 2 * pads[d] - extent) / strides[d] + 1;
    g.window.push_back(int(window[d]));
    g.pads.push_back(int(pads[d]));
    g.strides.push_back(int(strides[d]));
    g.dilations.push_back(int(dilations[d]));
  }
  if (!symmetric_fits)
    for (size_t d = 0; d < spatial; ++d) {
      g.explicit_begin.push_back(int(pads[d]));
      g.explicit_end.push_back(ends[d]);
      g.pads[d] = 0;
    }
  if (spatial == 1) {
    g.window.push_back(1);
    g.pads.push_back(0);
    g.strides.push_back(1);
    g.dilations.push_back(1);
    if (g.pads_explicitly()) {
      g.explicit_begin.push_back(0);
      g.explicit_end.push_back(0);
    }
  }
  return g;
}

std::vector<int> cudnn_dims(const Shape& dims, size_t rank) {
  std::vector<int> v(dims.begin(), dims.end());
  while (v.size() < rank) v.push_back(1);
  return v;
}

std::vector<int> packed_strides(const std::vector<int>& dims, bool channels_last) {
  Shape order;  // the dims in storage order, outermost first
  for (size_t i = 0; i < dims.size(); ++i) order.push_back(int64_t(i));
  if (channels_last && has_channel_layout(dims.size())) order = to_channels_last_perm(dims.size());
  std::vector<int> strides(dims.size(), 1);
  for (size_t k = order.size() - 1; k-- > 0;)
    strides[size_t(order[k])] = strides[size_t(order[k + 1])] * dims[size_t(order[k + 1])];
  return strides;
}

}  // namespace dlc::codegen::cuda
