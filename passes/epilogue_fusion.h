// Epilogue fusion, the first step of the fusion pass (passes/fusion.h): Transposes and epilogues
// fold into MatMul's internal attributes and bias and residual inputs, a Relu into Conv's, a
// residual into Conv's and ConvTranspose's, and a Relu and its gradient into BatchNormalization
// and BatchNormGrad (ir/ops/nn.def, norm.def, train.def), so the CPU runtime, cuBLASLt and cuDNN
// run them inside the GEMM, convolution or normalization. In schedule order:
//   1. MatMul(Transpose(x), y) -> MatMul(x, y) with transpose_a toggled (operand b alike), for a
//      Transpose that swaps only the last two dims and whose users are all MatMuls taking it as
//      an operand: the Transpose goes;
//   2. Transpose(MatMul(a, b)) -> MatMul(b, a) with the flags swapped and toggled ((AB)^T =
//      B^T A^T), for a last-two-dims swap of a bias-free MatMul result used only there;
//   3. Mul(MatMul, scalar constant) -> alpha *= the constant, for a bias-free MatMul;
//      Cast_half(Mul(Cast_f32(MatMul), scalar constant)) -> alpha *= the constant, for a
//      bias-free half MatMul (mixed precision's attention scores, scaled for the half softmax):
//      the product is rounded once, scaled, instead of rounded, scaled and rounded again (the same
//      bits for a power-of-two scale, such as 1/sqrt(64), barring overflow and subnormals);
//      Add(MatMul, bias) (either order) -> MatMul(…, bias), for a bias of shape [n] or
//      [1, …, 1, n] along the result's last dim that is available where the MatMul runs;
//      Cast_half(Add(Cast_f32(MatMul_half), bias)) -> MatMul_half(…, Cast_half(bias)) for an f32
//      parameter bias (mixed precision's f32 bias Add of a half MatMul read only in half: the
//      query, key and value projections): rounded once, with the bias in half, as autocast's
//      addmm, where the f32 Add rounded the product and then the sum (not exact);
//      Add(MatMul, r) -> MatMul(…, bias?, r) for a residual r of the result's type available
//      there (a skip connection, or two gradient contributions summed), after any bias, so
//      (product + bias) + r keeps the unfused order and neither scale nor bias folds after it;
//      Add(Conv | ConvTranspose, r) -> r as their residual input alike (ResNet's backward pass
//      sums a block's input gradient from the skip and the ConvTranspose of the conv path);
//   4. Relu(MatMul), Relu(Conv) and Relu(BatchNormalization's y) -> the producer with activation
//      = "relu" (after the bias, alpha and residual already folded; Conv's bias is its own
//      input), so no scale or bias folds after it. In training ReluGrad reads the Relu result,
//      which the producer then computes, so the pre-activation only has to have no other user
//      (it never has one for a Relu's gradient);
//   5. BatchNormGrad(ReluGrad(dy, y), x, scale) -> BatchNormGrad(dy, x, scale, y) with activation
//      = "relu", for a ReluGrad result used only there: with 4, a Conv -> BatchNormalization ->
//      Relu block runs as two kernels forward and two backward (cuDNN's BN_ACTIVATION ops);
//   6. MatMul(Mul(x, k), b) -> MatMul(x, b) with alpha *= k, also across mixed precision's casts
//      (MatMul(Cast_half(Mul(Cast_f32(h), k)), b) -> MatMul(h, b)), for a power-of-two scalar
//      constant k and a Mul whose readers are all MatMuls taking it as an operand: attention's
//      score gradient, scaled by 1/sqrt(head size) for the query and key gradients. Exact for the
//      power of two (barring overflow and subnormals).
// Only direct producer/consumer pairs fold (never across a Cast, so mixed precision's half
// MatMuls keep their f32 Adds; the half scales and bias of 3 and 6 are the exceptions); the folded result has
// no other user and is not a graph output or state update; operands are rank >= 2 (any rank for a Relu); the
// folded value is taken over (its name, role and every reference stay), so a `W@grad` gradient produced by a
// Transpose is then the MatMul's result. f32 results are bit-identical to the unfused ops on the CPU (each
// epilogue is one f32 operation on the f32 product either way; the CPU kernels add the residual and apply the
// Relu themselves, since oneDNN's relu post-op turns NaN into 0, runtime/cpu/epilogue.h); a 16-bit result is
// rounded once instead of per op (so a Relu then sees the f32 value: a negative that rounds to -0 gives +0).
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace dlc::passes {

struct EpilogueFusionCounts {
  int64_t operand_transposes = 0;   // Transposes of operands removed (rewrite 1)
  int64_t result_transposes = 0;    // Transposes of results removed (rewrite 2)
  int64_t scales = 0;               // Muls folded into alpha
  int64_t half_scales = 0;          // Muls between mixed precision's casts folded into alpha
  int64_t operand_scales = 0;       // Muls of a MatMul operand folded into its readers' alpha (rewrite 6)
  int64_t half_operand_scales = 0;  // the same between mixed precision's casts
  int64_t half_biases = 0;          // f32 bias Adds between mixed precision's casts folded (as half)
  int64_t biases = 0;               // Adds folded into the bias
  int64_t residuals = 0;            // Adds folded into the residual
  int64_t activations = 0;          // Relus folded into a MatMul's activation
  int64_t conv_activations = 0;     // Relus folded into a Conv's activation
  int64_t conv_residuals = 0;       // Adds folded into a Conv's or ConvTranspose's residual
  int64_t norm_activations = 0;     // Relus folded into a BatchNormalization's activation
  int64_t norm_relu_grads = 0;      // ReluGrads folded into a BatchNormGrad
  int64_t dead_nodes = 0;           // dead nodes removed first (not in total())
  int64_t total() const {
    return operand_transposes + result_transposes + scales + half_scales + operand_scales +
           half_operand_scales + half_biases + biases + residuals + activations + conv_activations +
           conv_residuals + norm_activations + norm_relu_grads;
  }
};

/// Removes dead nodes (their uses would block folds), then runs the four rewrites over `g`;
/// returns what each removed.
EpilogueFusionCounts fuse_epilogues(ir::Graph& g);

}  // namespace dlc::passes
