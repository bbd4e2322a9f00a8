// One representative kernel source per CUDA emitter and variant, for a storage dtype: what the
// NVRTC compile test compiles for sm_90 (every case × f32, f16, bf16) and the golden test keeps.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "codegen/cuda/activation_programs.h"
#include "codegen/cuda/arg_extremum_emitter.h"
#include "codegen/cuda/attention_emitter.h"
#include "codegen/cuda/copy_emitter.h"
#include "codegen/cuda/cross_entropy_emitter.h"
#include "codegen/cuda/dropout_emitter.h"
#include "codegen/cuda/elementwise_emitter.h"
#include "codegen/cuda/embedding_emitter.h"
#include "codegen/cuda/gather_elements_emitter.h"
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

/// relu(x + b) * x over [rows, cols] with operands of dtype `t` and an f32 result: the
/// prologue of a fused reduction (FusedReduce); `store`: relu(x + b) is a second output (dtype t).
inline ExprProgram fused_reduce_program(DType t, int64_t rows, int64_t cols, bool store = false) {
  ExprProgram p({rows, cols});
  const int x = p.input("x", t, {rows, cols});
  const int b = p.input("b", t, {cols});
  const int r = p.op(ExprOp::Relu, {p.op(ExprOp::Add, {x, b})});
  p.output("y", p.op(ExprOp::Mul, {r, x}), DType::F32);
  if (store) p.output("r", p.cast(r, t), t);
  return p;
}

/// A reduction spec of the [outer, extent, inner] view.
inline ReduceSpec reduce_view(ReduceOp op, DType t, int64_t outer, int64_t extent, int64_t inner,
                              const ExprProgram* prologue = nullptr) {
  ReduceSpec s;
  s.op = op;
  s.dtype = t;
  s.outer = outer;
  s.extent = extent;
  s.inner = inner;
  s.prologue = prologue;
  return s;
}

/// The reduction of fused_reduce_program(t, rows, cols) as [outer, extent, inner].
inline KernelSource fused_reduce(DType t, ReduceOp op, int64_t rows, int64_t cols, int64_t outer,
                                 int64_t extent, int64_t inner, bool store = false) {
  const ExprProgram p = fused_reduce_program(t, rows, cols, store);
  return emit_reduce(reduce_view(op, DType::F32, outer, extent, inner, &p));
}

/// Every op of expression programs once, over operands of dtype `t` broadcast to [6, 7] (rows
/// not a multiple of 4: the one-element path), a bool condition, and three outputs: the chain,
/// a mask, and the comparisons as bit flags (exact in every dtype).
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
  const int rc =
      p.op(ExprOp::Mul,
           {rg, p.op(ExprOp::Reciprocal, {p.op(ExprOp::Add, {p.op(ExprOp::Abs, {s}), p.constant(1.0)})})});
  const int cast = p.cast(rc, t == DType::BF16 ? DType::F16 : DType::BF16);
  p.output("out", cast, t);
  p.output("mask", p.cast(sel, DType::Bool), DType::Bool);
  // Comparisons of values both sides compute exactly: inputs, and ReluGrad's zeros.
  const int cmps[] = {p.op(ExprOp::Equal, {rg, p.constant(0.0)}), p.op(ExprOp::Greater, {x, y}),
                      p.op(ExprOp::GreaterOrEqual, {x, s}), p.op(ExprOp::Less, {y, s}),
                      p.op(ExprOp::LessOrEqual, {y, x})};
  int flags = cmps[0];
  for (int k = 1; k < 5; ++k)
    flags = p.op(ExprOp::Add, {flags, p.op(ExprOp::Mul, {cmps[k], p.constant(1 << k)})});
  p.output("flags", flags, t);
  return p;
}

/// The one-operand math ops on operands in their domains, one output per family.
inline ExprProgram math_ops_program(DType t) {
  ExprProgram p({6, 7});
  const int x = p.input("x", t, {6, 7});
  const int u = p.op(ExprOp::Mul, {p.op(ExprOp::Tanh, {x}), p.constant(0.5)});  // |u| < 0.5
  auto sum = [&](std::initializer_list<ExprOp> ops, int operand) {
    int s = p.constant(0.0);
    for (ExprOp op : ops) s = p.op(ExprOp::Add, {s, p.op(op, {operand})});
    return s;
  };
  p.output("trig", sum({ExprOp::Sin, ExprOp::Cos, ExprOp::Tan, ExprOp::Asin, ExprOp::Acos, ExprOp::Atan}, u),
           t);
  p.output("hyperbolic", sum({ExprOp::Sinh, ExprOp::Cosh, ExprOp::Asinh, ExprOp::Atanh}, u), t);
  p.output("acosh", p.op(ExprOp::Acosh, {p.op(ExprOp::Add, {p.op(ExprOp::Abs, {x}), p.constant(1.0)})}), t);
  p.output("rounding",
           sum({ExprOp::Floor, ExprOp::Ceil, ExprOp::Round, ExprOp::Sign},
               p.op(ExprOp::Mul, {x, p.constant(3.0)})),
           t);
  p.output("activations", sum({ExprOp::Softplus, ExprOp::Softsign}, x), t);
  return p;
}

/// The logical ops on bool operands: (a and b) or not (a xor b).
inline ExprProgram logical_program() {
  ExprProgram p({6, 7});
  const int a = p.input("a", DType::Bool, {6, 7}), b = p.input("b", DType::Bool, {7});
  p.output("y", p.op(ExprOp::Or, {p.op(ExprOp::And, {a, b}), p.op(ExprOp::Not, {p.op(ExprOp::Xor, {a, b})})}),
           DType::Bool);
  return p;
}

/// Every activation with attributes and Mod (activation_programs.h), summed.
inline ExprProgram activations_program(DType t) {
  ExprProgram p({6, 7});
  const int x = p.input("x", t, {6, 7}), slope = p.input("slope", t, {7});
  int sum = p.constant(0.0);
  for (const char* op :
       {"LeakyRelu", "ThresholdedRelu", "HardSigmoid", "HardSwish", "Elu", "Selu", "Celu", "Mish"})
    sum = p.op(ExprOp::Add, {sum, activation_expr(p, op, {}, {x})});
  sum = p.op(ExprOp::Add, {sum, activation_expr(p, "Mod", {}, {x, slope})});
  p.output("y", p.op(ExprOp::Add, {sum, activation_expr(p, "PRelu", {}, {x, slope})}), t);
  return p;
}

/// Slice [6, 10, 9] -> [3, 4, 9]: axis 0 from 1 by 2, axis 1 from 8 by -2 (in range: no checks).
inline CopySpec slice_case(DType t) { return {t, {3, 4, 9}, {{{6, 10, 9}, {1, 8, 0}, {2, -2, 1}, {}, {}}}}; }
/// Pad [4, 5] by 1 before and 2 after on both axes; in constant mode axis 0 crops 1 in front
/// instead (pads -1, 2).
inline CopySpec pad_case(DType t, const std::string& mode) {
  const bool crop = mode == "constant";
  return {t, {crop ? 5 : 7, 8}, {{{4, 5}, {crop ? 1 : -1, -1}, {1, 1}, {}, {}}}, mode, -1.5};
}
/// Transpose of [2, 3, 5] by perm {2, 0, 1} -> [5, 2, 3]: input axis d follows output axis
/// {1, 2, 0}[d].
inline CopySpec transpose_case(DType t) {
  return {t, {5, 2, 3}, {{{2, 3, 5}, {0, 0, 0}, {1, 1, 1}, {1, 2, 0}, {}}}};
}
/// Concat of [2, 3, 4], [2, 1, 4], [2, 5, 4] on axis 1.
inline CopySpec concat_case(DType t) {
  return {t,
          {2, 9, 4},
          {{{2, 3, 4}, {0, 0, 0}, {1, 1, 1}, {}, {}},
           {{2, 1, 4}, {0, -3, 0}, {1, 1, 1}, {}, {}},
           {{2, 5, 4}, {0, -4, 0}, {1, 1, 1}, {}, {}}}};
}

/// Tile of [2, 3] to [4, 9]: coordinates wrap around.
inline CopySpec tile_case(DType t) { return {t, {4, 9}, {{{2, 3}, {0, 0}, {1, 1}, {}, {}}}, "wrap", 0}; }
/// SliceGrad of slice_case: dy [3, 4, 9] read where (x0 - 1) / 2 and (8 - x1) / 2 are whole and in range.
inline CopySpec slice_grad_case(DType t) {
  return {t, {6, 10, 9}, {{{3, 4, 9}, {-1, 8, 0}, {1, -1, 1}, {}, {2, 2, 1}}}, "constant", 0};
}
/// Split of [2, 9, 4] on axis 1 into 3, 1 and 5.
// Trilu of [2, 5, 7]: band 1 (upper) or -1 (lower) at diagonal k.
inline CopySpec trilu_case(DType t, int band, int64_t k) {
  return {t, {2, 5, 7}, {{{2, 5, 7}, {0, 0, 0}, {1, 1, 1}, {}, {}}}, "constant", 0, band, k};
}

inline std::vector<CopySpec> split_cases(DType t) {
  std::vector<CopySpec> specs;
  for (const auto& [start, extent] : {std::pair{0, 3}, {3, 1}, {4, 5}})
    specs.push_back({t, {2, extent, 4}, {{{2, 9, 4}, {0, start, 0}, {1, 1, 1}, {}, {}}}, "constant", 0});
  return specs;
}

/// One source per emitter variant for storage dtype `t`.
inline std::vector<KernelSource> kernel_cases(DType t) {
  std::vector<KernelSource> v;
  v.push_back(emit_elementwise(bias_relu_program(t)));
  v.push_back(emit_elementwise(all_ops_program(t)));
  v.push_back(emit_elementwise(math_ops_program(t)));
  v.push_back(emit_elementwise(activations_program(t)));
  v.push_back(emit_elementwise(logical_program()));
  v.push_back(emit_reduce(reduce_view(ReduceOp::Sum, t, 96, 1000, 1)));                // warp per row
  v.push_back(emit_reduce(reduce_view(ReduceOp::Max, t, 300, 20000, 1)));              // block per row
  v.push_back(emit_reduce(reduce_view(ReduceOp::Max, t, 8, 20000, 1)));                // rows, split
  v.push_back(emit_reduce(reduce_view(ReduceOp::Mean, t, 1, 1 << 20, 1)));             // whole tensor, split
  v.push_back(emit_reduce(reduce_view(ReduceOp::Mean, t, 16, 100, 300)));              // columns
  v.push_back(emit_reduce(reduce_view(ReduceOp::Sum, t, 1, 65536, 64)));               // columns, split
  v.push_back(emit_reduce(reduce_view(ReduceOp::Max, t, 3, 4, 5)));                    // columns: max
  v.push_back(emit_reduce(reduce_view(ReduceOp::Max, t, 1, 65536, 64)));               // columns, split: max
  v.push_back(emit_reduce(reduce_view(ReduceOp::Prod, t, 96, 1000, 1)));               // rows: product
  v.push_back(emit_reduce(reduce_view(ReduceOp::Prod, t, 8, 20000, 1)));               // rows, split: product
  v.push_back(emit_reduce(reduce_view(ReduceOp::Prod, t, 16, 100, 300)));              // columns: product
  v.push_back(emit_reduce(reduce_spec(ReduceOp::Sum, t, {8, 6, 12, 12}, {0, 2, 3})));  // gathered
  v.push_back(
      emit_reduce(reduce_spec(ReduceOp::Max, t, {2, 3, 4, 5, 600}, {1, 3})));  // gathered, two reduced runs
  v.push_back(emit_reduce(reduce_spec(ReduceOp::Sum, t, {64, 8, 64, 64}, {0, 2, 3})));  // gathered, split
  v.push_back(emit_arg_extremum({t, true, false, 96, 1000, 1}));                        // ArgMax over rows
  v.push_back(emit_arg_extremum({t, false, true, 3, 7, 50}));  // ArgMin, the last, a middle axis
  v.push_back(emit_top_k_indices({t, true, 5, 3, 7, 50}));     // TopKIndices, a middle axis
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::L1, ReduceOp::L2, ReduceOp::SumSquare, ReduceOp::LogSum}) {
    v.push_back(emit_reduce(reduce_view(op, t, 96, 1000, 1)));   // rows, 4-wide
    v.push_back(emit_reduce(reduce_view(op, t, 1, 65536, 64)));  // columns, split
  }
  v.push_back(fused_reduce(t, ReduceOp::Sum, 96, 1000, 96, 1000, 1));           // fused: rows
  v.push_back(fused_reduce(t, ReduceOp::Sum, 512, 1024, 1, 1 << 19, 1, true));  // fused: whole, split, stored
  v.push_back(fused_reduce(t, ReduceOp::Mean, 300, 100, 1, 300, 100));          // fused: columns
  v.push_back(
      fused_reduce(t, ReduceOp::Sum, 65536, 64, 1, 65536, 64, true));  // fused: split, a stored output
  v.push_back(emit_softmax_forward({t, 128, 1000, 1, false}));
  v.push_back(emit_softmax_forward({t, 4, 50, 9, true}));            // log-softmax over a middle axis
  v.push_back(emit_softmax_forward({t, 64, 3000, 1, false, true}));  // ReduceLogSumExp, a block a row
  v.push_back(emit_softmax_forward({t, 4, 50, 9, false, true}));     // ReduceLogSumExp, a middle axis
  v.push_back(emit_softmax_backward({t, 128, 1000, 1, false}));
  v.push_back(emit_softmax_backward({t, 4, 3000, 2, true}));
  // Attention's kernels take 16-bit operands only: the f32 cases compile the f16 ones.
  const DType half = t == DType::F32 ? DType::F16 : t;
  v.push_back(emit_attention_forward({half, 96, 1024, 1024, 64, 64, 0.125}));  // GPT-2 small, batch 8
  v.push_back(emit_attention_backward({half, 96, 1024, 1024, 64, 64, 0.125}));
  v.push_back(emit_attention_forward({half, 3, 100, 77, 32, 48, 0.3}));  // partial tiles, two head sizes
  v.push_back(emit_attention_backward({half, 3, 100, 77, 32, 48, 0.3}));
  v.push_back(emit_attention_backward({half, 2, 64, 64, 128, 128, 1.0}));            // the largest head size
  v.push_back(emit_attention_forward({half, 96, 1024, 1024, 64, 64, 0.125, true}));  // causal
  v.push_back(emit_attention_backward({half, 96, 1024, 1024, 64, 64, 0.125, true}));
  // Seq-major (the projections' [batch, seq, heads, head size]), as GPT-2 small's plans have it.
  v.push_back(emit_attention_forward({half, 96, 1024, 1024, 64, 64, 0.125, false, true, 12}));
  v.push_back(emit_attention_backward({half, 96, 1024, 1024, 64, 64, 0.125, true, true, 12}));
  v.push_back(emit_layer_norm_forward({t, 256, 768, 1e-5, true, std::nullopt}));
  v.push_back(
      emit_layer_norm_forward({t, 6, 200, 1e-5, true, std::nullopt, 3}));         // instance norm, 3 channels
  v.push_back(emit_layer_norm_backward({t, 64, 768, 1e-5, true, std::nullopt}));  // one split
  v.push_back(emit_layer_norm_backward({t, 16384, 64, 1e-6, true, std::nullopt}));  // split rows
  // Mixed precision's layer norm of an f32 x with a y (and dy) of type t.
  v.push_back(emit_layer_norm_forward({DType::F32, 256, 768, 1e-5, true, t}));
  v.push_back(emit_layer_norm_backward({DType::F32, 64, 768, 1e-5, true, t}));
  v.push_back(emit_cross_entropy_forward({t, DType::I64, 64, 1000, 1, "mean", -100, false}));
  v.push_back(emit_cross_entropy_forward({t, DType::I32, 8, 10, 5, "none", std::nullopt, false}));
  v.push_back(emit_cross_entropy_backward({t, DType::I64, 64, 1000, 1, "mean", -100, false}));
  v.push_back(emit_cross_entropy_backward({t, DType::I64, 8, 10, 5, "sum", std::nullopt, false}));
  v.push_back(emit_cross_entropy_forward({t, DType::I64, 8, 10, 5, "mean", -1, true}));  // NLL
  v.push_back(emit_cross_entropy_forward({t, DType::I32, 64, 1000, 1, "none", std::nullopt, true}));
  v.push_back(emit_embedding_gather({t, DType::I64, 1000, 64, 300}));
  v.push_back(emit_embedding_backward({t, DType::I32, 1000, 64, 300}));
  v.push_back(emit_embedding_gather({t, DType::I64, 10, 7, 5, 3}));  // Gather on axis 1 of [3, 10, 7]
  v.push_back(emit_embedding_backward({t, DType::I64, 10, 8, 5, 3}));
  v.push_back(emit_sgd_update({t, t, 0.9, 0.0, 1e-4, true}));
  v.push_back(emit_adam_update({t, t, 0.9, 0.999, 1e-8, 0.0, false}));
  // Mixed precision: f32 parameters, a 16-bit (or f32) gradient.
  v.push_back(emit_adam_update({DType::F32, t, 0.9, 0.999, 1e-8, 0.0, false}));
  v.push_back(emit_adam_update({t, t, 0.9, 0.95, 1e-8, 0.1, true}));
  v.push_back(emit_rmsprop_update({t, t, 0.99, 1e-8, 1e-2, 0.9, false}));  // momentum buffer
  v.push_back(emit_rmsprop_update({t, t, 0.9, 1e-6, 0.0, 0.0, true}));     // centered
  v.push_back(emit_copy(slice_case(t)));
  for (const char* mode : {"constant", "edge", "reflect"}) v.push_back(emit_copy(pad_case(t, mode)));
  v.push_back(emit_copy(concat_case(t)));
  v.push_back(emit_copy(transpose_case(t)));
  v.push_back(emit_copy(tile_case(t)));
  v.push_back(emit_copy(slice_grad_case(t)));
  v.push_back(emit_copies(split_cases(t)));
  v.push_back(emit_gather_elements({t, DType::I64, {3, 5, 4}, {3, 2, 4}, 1}));
  v.push_back(emit_gather_elements({t, DType::I32, {4, 3}, {6, 2}, 0}));
  v.push_back(emit_gather_elements({t, DType::I64, {7}, {3}, 0}));  // rank 1: no coordinates
  v.push_back(emit_gather_elements_backward({t, DType::I64, {5, 4, 2}, {3, 4, 2}, 0}));
  v.push_back(
      emit_gather_elements_backward({t, DType::I32, {3, 4}, {2, 6}, 1}));  // indices smaller off the axis
  v.push_back(emit_copy(trilu_case(t, 1, -1)));
  v.push_back(emit_copy(trilu_case(t, -1, 2)));
  v.push_back(emit_dropout({t, 1003, 0.25, 42, true, DType::I64}));  // mask and offset, a partial block
  v.push_back(emit_dropout({t, 64, 0.5, 7, false, std::nullopt}));
  return v;
}

}  // namespace dlc::codegen::cuda::test
