// One representative kernel source per CUDA emitter and variant, for a storage dtype: what the
// NVRTC compile test compiles for sm_90 (every case × f32, f16, bf16) and the golden test keeps.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "codegen/cuda/cross_entropy_emitter.h"
#include "codegen/cuda/elementwise_emitter.h"
#include "codegen/cuda/embedding_emitter.h"
#include "codegen/cuda/layer_norm_emitter.h"
#include "codegen/cuda/optimizer_emitter.h"
#include "codegen/cuda/reduce_emitter.h"
#include "codegen/cuda/softmax_emitter.h"

namespace dlc {
/// Test parameters of type DType print as "f16", not as bytes.
inline void PrintTo(DType t, std::ostream* os) { *os << dtype_name(t); }
}  // namespace dlc

namespace dlc::codegen::cuda::test {

/// y = relu(x + b) with b broadcast along rows: the 4-wide path with a strided operand.
inline ExprProgram bias_relu_program(DType t, int64_t rows = 64, int64_t cols = 128) {
  ExprProgram p({rows, cols});
  const int x = p.input("x", t, {rows, cols});
  const int b = p.input("b", t, {cols});
  p.output("y", p.op(ExprOp::Relu, {p.op(ExprOp::Add, {x, b})}), t);
  return p;
}

/// Every op of expression programs once, over operands of dtype `t` broadcast to [6, 7] (rows
/// not a multiple of 4: the one-element path), a bool condition, and two outputs.
inline ExprProgram all_ops_program(DType t) {
  ExprProgram p({6, 7});
  const int x = p.input("x", t, {6, 7});
  const int y = p.input("y", t, {6, 1});
  const int s = p.input("s", t, {});
  const int c = p.input("c", DType::Bool, {7});
  const int half = p.constant(0.5);
  const int a = p.op(ExprOp::Add, {x, y});
  const int b = p.op(ExprOp::Sub, {a, s});
  const int m = p.op(ExprOp::Mul, {b, half});
  const int d = p.op(ExprOp::Div, {m, p.op(ExprOp::Add, {p.op(ExprOp::Abs, {y}), p.constant(1.0)})});
  const int e = p.op(ExprOp::Exp, {p.op(ExprOp::Neg, {d})});
  const int l = p.op(ExprOp::Log, {p.op(ExprOp::Add, {e, p.constant(1.0)})});
  const int q = p.op(ExprOp::Sqrt, {p.op(ExprOp::Abs, {l})});
  const int w = p.op(ExprOp::Pow, {q, p.constant(1.5)});
  const int g = p.op(ExprOp::Sigmoid, {w});
  const int h = p.op(ExprOp::Tanh, {p.op(ExprOp::Erf, {g})});
  const int mx = p.op(ExprOp::Max, {h, x});
  const int mn = p.op(ExprOp::Min, {mx, y});
  const int r = p.op(ExprOp::Relu, {mn});
  const int sel = p.op(ExprOp::Where, {c, r, x});
  const int cl = p.op(ExprOp::Clip, {sel, p.constant(-0.25), p.constant(0.75)});
  const int rg = p.op(ExprOp::ReluGrad, {cl, x});
  const int cast = p.cast(rg, t == DType::BF16 ? DType::F16 : DType::BF16);
  p.output("out", cast, t);
  p.output("mask", p.cast(sel, DType::Bool), DType::Bool);
  return p;
}

/// One source per emitter variant for storage dtype `t`.
inline std::vector<KernelSource> kernel_cases(DType t) {
  std::vector<KernelSource> v;
  v.push_back(emit_elementwise(bias_relu_program(t)));
  v.push_back(emit_elementwise(all_ops_program(t)));
  v.push_back(emit_reduce({ReduceOp::Sum, t, 96, 1000, 1}));    // warp per row
  v.push_back(emit_reduce({ReduceOp::Max, t, 8, 20000, 1}));    // block per row
  v.push_back(emit_reduce({ReduceOp::Mean, t, 16, 100, 300}));  // columns
  v.push_back(emit_reduce({ReduceOp::Sum, t, 1, 65536, 64}));   // columns, split
  v.push_back(emit_softmax_forward({t, 128, 1000, 1, false}));
  v.push_back(emit_softmax_forward({t, 4, 50, 9, true}));  // log-softmax over a middle axis
  v.push_back(emit_softmax_backward({t, 128, 1000, 1, false}));
  v.push_back(emit_softmax_backward({t, 4, 3000, 2, true}));
  v.push_back(emit_layer_norm_forward({t, 256, 768, 1e-5, true}));
  v.push_back(emit_layer_norm_backward({t, 64, 768, 1e-5, true}));    // one split
  v.push_back(emit_layer_norm_backward({t, 16384, 64, 1e-6, true}));  // split rows
  v.push_back(emit_cross_entropy_forward({t, DType::I64, 64, 1000, 1, "mean", -100}));
  v.push_back(emit_cross_entropy_forward({t, DType::I32, 8, 10, 5, "none", std::nullopt}));
  v.push_back(emit_cross_entropy_backward({t, DType::I64, 64, 1000, 1, "mean", -100}));
  v.push_back(emit_cross_entropy_backward({t, DType::I64, 8, 10, 5, "sum", std::nullopt}));
  v.push_back(emit_embedding_gather({t, DType::I64, 1000, 64, 300}));
  v.push_back(emit_embedding_backward({t, DType::I32, 1000, 64, 300}));
  v.push_back(emit_sgd_update({t, 0.9, 0.0, 1e-4, true}));
  v.push_back(emit_adam_update({t, 0.9, 0.999, 1e-8, 0.0, false}));
  v.push_back(emit_adam_update({t, 0.9, 0.95, 1e-8, 0.1, true}));
  return v;
}

}  // namespace dlc::codegen::cuda::test
