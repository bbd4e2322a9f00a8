// Operation counts.
#include "codegen/flops.h"

#include "dlc/attention.h"
#include "dlc/expr_program.h"

namespace dlc::codegen {

namespace {

int64_t elements(const ir::Value* v) { return v ? v->type.numel() : 0; }

// A convolution with weight [A, B, k…]: every element of `per` (Conv: the output [N, OC, …];
// ConvTranspose: the input [N, IC, …], which scatters) takes B * prod(k) multiply-adds.
int64_t conv_flops(const ir::Value* per, const ir::Value* weight) {
  const Shape& w = weight->type.shape;
  int64_t window = 1;
  for (size_t i = 2; i < w.size(); ++i) window *= w[i];
  return 2 * elements(per) * w[1] * window;
}

// Ops per result element of the folded residual Add and Relu epilogues (MatMul, Conv,
// ConvTranspose), counted as the ops they stand for.
int64_t residual_and_activation(const ir::Node& n) {
  return (n.inputs.size() > 3 && n.inputs[3]) + n.attrs.has("activation");
}

// Attention's problem from q, k and v at inputs first…
AttentionShape attention_of(const ir::Node& n, size_t first) {
  return attention_shape(n.inputs[first]->type.shape, n.inputs[first + 1]->type.shape,
                         n.inputs[first + 2]->type.shape, n.attrs);
}

}  // namespace

int64_t node_flops(const ir::Node& n) {
  switch (n.op) {
    case ir::OpKind::MatMul: {
      const Shape& a = n.inputs[0]->type.shape;
      const bool ta = n.attrs.i("transpose_a", 0) != 0;
      const int64_t k = a.size() < 2 ? a.back() : (ta ? a[a.size() - 2] : a.back());
      // A fused epilogue counts as the Mul, Adds and Relu it stands for.
      const int64_t epilogue = (n.attrs.f("alpha", 1.0) != 1.0) + (n.inputs.size() > 2 && n.inputs[2]) +
                               residual_and_activation(n);
      return (2 * k + epilogue) * elements(n.outputs[0]);
    }
    case ir::OpKind::Conv:
      return conv_flops(n.outputs[0], n.inputs[1]) + residual_and_activation(n) * elements(n.outputs[0]);
    case ir::OpKind::ConvTranspose:
      return conv_flops(n.inputs[0], n.inputs[1]) + residual_and_activation(n) * elements(n.outputs[0]);
    // dW[OC, IC/g, k…] sums over N and the output positions: the forward Conv's count.
    case ir::OpKind::ConvGradFilter: {
      const Shape& dw = n.outputs[0]->type.shape;
      int64_t per_output = 1;
      for (size_t i = 1; i < dw.size(); ++i) per_output *= dw[i];
      return 2 * elements(n.inputs[0]) * per_output;
    }
    // As the unfused ops it stands for: q kᵀ and p v (2 D and 2 Dv per score) and the scaling and
    // Softmax (one each)…
    case ir::OpKind::Attention: {
      const AttentionShape a = attention_of(n, 0);
      return a.scores() * (2 * (a.depth + a.value_depth) + 2);
    }
    // …and their gradients: do vᵀ, ds k, dsᵀ q and pᵀ do (4 D + 4 Dv per score), SoftmaxGrad
    // (one). The recomputed scores are not counted, as FlashAttention's MFU does not count them.
    case ir::OpKind::AttentionGrad: {
      const AttentionShape a = attention_of(n, 1);
      return a.scores() * (4 * (a.depth + a.value_depth) + 1);
    }
    // One per element and arithmetic instruction of the program (loads, constants and the
    // roundings of 16-bit intermediates are free, as in the unfused ops they stand for); a
    // FusedReduce adds one per result element, as the unfused reduction counts.
    case ir::OpKind::FusedElementwise:
    case ir::OpKind::FusedReduce: {
      std::vector<ExprInput> inputs;
      for (const ir::Value* v : n.inputs) inputs.push_back({v->name, v->type.dtype, v->type.shape});
      std::vector<std::string> names;
      for (const ir::Value* v : n.outputs) names.push_back(v->name);
      const ExprProgram p = parse_expr_program(n.attrs.s("program"), std::move(inputs), names);
      int64_t ops = 0;
      for (const ExprInstr& i : p.instrs)
        ops += i.op != ExprOp::Input && i.op != ExprOp::Constant && i.op != ExprOp::Cast;
      return ops * num_elements(p.dims) + (n.op == ir::OpKind::FusedReduce ? elements(n.outputs[0]) : 0);
    }
    default: {
      // One op per result element; BatchNormalization's folded Relu and BatchNormGrad's folded
      // ReluGrad count one more per element of y / dx, as the ops they stand for.
      int64_t total = n.attrs.has("activation") ? elements(n.outputs[0]) : 0;
      for (const ir::Value* out : n.outputs) total += elements(out);
      return total;
    }
  }
}

}  // namespace dlc::codegen
