// Mixed precision (`--precision bf16|fp16`), as PyTorch's autocast: MatMul, Conv and
// ConvTranspose take their operands cast to the half type and give a half result, cast back to
// f32 for its users. Everything else — normalizations, reductions, elementwise ops, the loss —
// stays f32, and so do the parameters (f32 master weights: a weight is cast where a half op
// reads it) and the optimizer state; except a BatchNormalization of a half convolution's result
// (stat batch_norms_in_half), which runs as autocast runs cuDNN's: half x and y, f32 parameters
// and statistics (a Relu, MaxPool or AveragePool of its result that a half op reads runs on the
// half result: stats relus_in_half, pools_in_half; epilogue fusion then folds the Relu into the
// batch norm; an Add of two such half results, ResNet's residual connection, runs in half as
// autocast's add of two half tensors does, so the residual stream and its gradient are half:
// stat adds_in_half); and a Softmax whose result only half ops
// read (attention's probabilities: stat softmax_in_half), which runs in half (f32 inside its kernel; its
// backward then reads the rounded probabilities, where autocast keeps them f32); and a LayerNormalization
// whose result only half ops read (a transformer's, before its half MatMuls: stat layer_norms_in_half)
// gives its result in half (y_dtype: the same bits as the cast; its gradient takes the half dy). The pass
// runs before autodiff, so the backward follows: a Cast's gradient is the cast back, so MatMul/convolution
// gradients are computed in half and the parameter gradients arrive in f32. The CPU kernels store the half
// operands and compute in f32 (runtime/cpu/widen.h). fp16, whose range is narrow, also gets dynamic loss
// scaling (loss_scaling.h). An operand made by a Transpose or Reshape is cast before it instead
// (stats transposes_in_half, reshapes_in_half), so epilogue fusion can still fold a Transpose into
// the MatMul, and an operand that is a half value widened to f32 is that half value (a round
// trip through f32 changes no bit: round_trips_skipped), so a half MatMul's result reshaped for
// the next half MatMul (attention's heads) never goes through f32. With f32 the pass does nothing.
#pragma once

#include "dlc/dtype.h"
#include "passes/pass.h"

namespace dlc::passes {

/// The half dtype of a `--precision` value: fp32 gives F32 (no change), bf16 BF16, fp16 F16;
/// anything else is an error.
DType parse_precision(const std::string& precision);

class MixedPrecision final : public Pass {
 public:
  /// With F16 the pass also adds the loss scale, `initial_loss_scale` (loss_scaling.h).
  explicit MixedPrecision(DType half, double initial_loss_scale = 65536.0)
      : half_(half), initial_loss_scale_(initial_loss_scale) {}
  std::string_view name() const override { return "mixed-precision"; }
  std::string_view summary() const override {
    return "run MatMul and convolutions in half precision, everything else in f32";
  }
  bool run(ir::Graph& graph) override;

 private:
  DType half_;
  double initial_loss_scale_;
};

}  // namespace dlc::passes
