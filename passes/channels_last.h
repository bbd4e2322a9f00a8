// Channels-last layout (`--layout nhwc`; the default for 16-bit CUDA plans): the convolutions,
// pooling and batch normalizations and their gradients take channels-last operands
// (dlc/channels_last.h), as PyTorch's channels_last memory format and torch.compile's layout
// optimization run them: cuDNN's tensor-core convolutions and its fast batch norm work on NHWC,
// and with NCHW operands cuDNN transposes around every call. Each such node gets Transposes into
// and out of channels-last (stat layout_nodes); a Transpose to channels-last of a Transpose back
// is its source; and an op reading Transposes back runs on their sources instead, its result
// transposed back (stat ops_moved): an elementwise op whose full-size operands are such
// Transposes at least as often as values with no channels-last form yet (those get one; scalars
// join as they are), and a reduction, Pad or Slice with its axes or pads in channels-last places.
// So the Transposes between the nodes of a CNN cancel, and the edges of its convolutional part
// keep one each (stat transposes: those left; each convolution weight has one, and its gradient
// one back). Exact: only the order of elements changes. Runs after the optimizer and before
// fusion, so the epilogue folds and the elementwise groups see the moved ops.
#pragma once

#include "passes/pass.h"

namespace dlc::passes {

/// Whether a plan gets the channels-last layout: `layout` is "nchw" (no), "nhwc" (yes) or "auto"
/// (for a CUDA device with a 16-bit precision); anything else is an error.
bool wants_channels_last(const std::string& layout, const std::string& device, const std::string& precision);

class ChannelsLast final : public Pass {
 public:
  std::string_view name() const override { return "channels-last"; }
  std::string_view summary() const override {
    return "run convolutions, pooling and batch norm on channels-last (NHWC) operands";
  }
  bool run(ir::Graph& graph) override;
};

}  // namespace dlc::passes
