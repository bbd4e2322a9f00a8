// Multi-tensor optimizer updates: one launch updates every parameter of a table (multi_tensor.h)
// in place, with torch.optim's formulas as the CPU kernels implement them (SgdUpdate,
// AdamUpdate, RmspropUpdate). Parameters and gradients are stored as f32, f16 or bf16 (a gradient
// in the parameter's type, or 16-bit for an f32 parameter: mixed precision's weight gradient, its
// Cast folded, widened as it is loaded); optimizer state (velocity, moments) is always f32. Hyperparameters
// are compile-time constants; the learning rate and the step count are read from device memory, so a schedule
// needs no recompilation.
//
// Entry: (table, num_tensors, num_chunks, lr, step, apply)
//   table        device array of MultiTensorEntry; ptr = {param, grad, velocity, -} for SGD
//                (velocity may be null without momentum), {param, grad, m, v} for Adam,
//                {param, grad, square_avg, grad_avg} for centered RMSprop, {param, grad,
//                square_avg, momentum_buffer} otherwise (the last null without momentum)
//   num_tensors  int, by value;  num_chunks  long long, by value (assign_chunks)
//   lr, step     const float* (one element each; step counts from 1; unused by SGD)
//   apply        const bool* (one element, or null): false leaves every table entry as it is
// Launch grid: min(num_chunks, 2^20) blocks (multi_tensor_grid), set at launch: the entry's
// grid is 0 because the emitter does not see the table.
#pragma once

#include <cstdint>

#include "codegen/cuda/kernel_source.h"
#include "dlc/dtype.h"

namespace dlc::codegen::cuda {

struct SgdSpec {
  DType dtype = DType::F32;       // params (and grads)
  DType grad_dtype = DType::F32;  // grads: dtype, or f16/bf16 with f32 params
  double momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
};

struct AdamSpec {
  DType dtype = DType::F32;
  DType grad_dtype = DType::F32;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool decoupled = false;  // AdamW
};

struct RmspropSpec {
  DType dtype = DType::F32;
  DType grad_dtype = DType::F32;
  double alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false;
};

KernelSource emit_sgd_update(const SgdSpec& spec);
KernelSource emit_adam_update(const AdamSpec& spec);
/// Throws dlc::Error for centered RMSprop with momentum (three state tensors; a table entry
/// holds two).
KernelSource emit_rmsprop_update(const RmspropSpec& spec);

/// Blocks of a multi-tensor launch over `num_chunks` chunks.
int64_t multi_tensor_grid(int64_t num_chunks);

}  // namespace dlc::codegen::cuda
