// Registration of the training-compile options.
#include "tools/dlc/training_options.h"

#include <fmt/format.h>

#include "dlc/error.h"

namespace dlc::tool {

void TrainingCompileFlags::add_to(CLI::App* cmd) {
  passes::LossOptions& loss = options.loss;
  passes::OptimizerOptions& opt = options.optimizer;
  registered_ = {
      cmd->add_option("--loss", loss.kind,
                      "cross_entropy | mse | l1 | bce_logits | output (default cross_entropy)"),
      cmd->add_option("--output", loss.output, "the model output the loss applies to (default: the first)"),
      cmd->add_option("--label", loss.label, "name of the label array (default: label)"),
      cmd->add_option("--optimizer", opt.kind, "sgd | adam | adamw | rmsprop (default sgd)"),
      cmd->add_option("--momentum", opt.momentum, "SGD / RMSprop momentum (default 0)"),
      cmd->add_flag("--nesterov", opt.nesterov, "Nesterov momentum (SGD)"),
      cmd->add_option("--weight-decay", opt.weight_decay, "weight decay (default 0)"),
      cmd->add_option("--beta1", opt.beta1, "Adam beta1 (default 0.9)"),
      cmd->add_option("--beta2", opt.beta2, "Adam beta2 (default 0.999)"),
      cmd->add_option("--eps", opt.eps, "Adam / RMSprop epsilon (default 1e-8)"),
      cmd->add_option("--alpha", opt.alpha, "RMSprop smoothing constant (default 0.99)"),
      cmd->add_flag("--centered", opt.centered, "centered RMSprop (normalize by the gradient's variance)"),
      cmd->add_option("--clip-norm", opt.clip_norm, "clip the global L2 norm of the gradients to MAX"),
      cmd->add_option("--accumulate", opt.accumulate,
                      "accumulate gradients over K micro-batches of --batch per optimizer step (default 1)"),
      cmd->add_option("--freeze", options.freeze, "regex of parameter names to keep fixed"),
      cmd->add_option("--precision", options.precision,
                      "fp32 | bf16 | fp16: MatMul and convolutions in half precision (default fp32)"),
      cmd->add_option("--layout", options.layout,
                      "auto | nchw | nhwc: convolutions, pooling and batch norm on channels-last operands "
                      "(default auto: nhwc for a CUDA plan in bf16 or fp16)"),
      cmd->add_option(
          "--attention", options.attention,
          "auto | fused | unfused: attention's MatMul-Softmax-MatMul as one Attention op that never "
          "stores the scores (default auto: fused for a CUDA plan in bf16 or fp16)"),
  };
  fp16_only_ = {
      cmd->add_option("--loss-scale", options.loss_scale,
                      "fp16: the initial dynamic loss scale (default 65536)"),
      cmd->add_option("--loss-scale-growth-interval", opt.loss_scale_growth_interval,
                      "fp16: finite steps in a row before the loss scale doubles (default 2000)"),
  };
  registered_.insert(registered_.end(), fp16_only_.begin(), fp16_only_.end());
}

const CLI::Option* TrainingCompileFlags::first_given() const {
  for (const CLI::Option* o : registered_)
    if (o->count() > 0) return o;
  return nullptr;
}

void TrainingCompileFlags::check() const {
  for (const CLI::Option* o : fp16_only_)
    if (o->count() > 0 && options.precision != "fp16")
      throw Error(
          fmt::format("{} applies to --precision fp16 only (dynamic loss scaling), and the precision is {}",
                      o->get_name(), options.precision));
}

}  // namespace dlc::tool
