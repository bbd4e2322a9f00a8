// CPU MatMul: numpy matmul (rank-1 operands promoted, batch broadcasting) with optional
// transposes of the last two dims and the fused epilogue act(alpha * product + bias + residual)
// (bias along the last dim, residual of the result's shape, act a Relu or nothing). f32 runs on
// oneDNN's matmul (f16/bf16 widened to it, cpu/widen.h): the bias as its bias argument, alpha as
// output scales — with both, the bias becomes a binary-add post-op, since oneDNN scales its bias
// argument too; a small transposed B reordered first; other dtypes on a plain loop. The residual
// and the Relu are applied to the stored result (cpu/epilogue.h: oneDNN's relu post-op loses NaN).
#include <algorithm>

#include "runtime/cpu/dispatch.h"
#include "runtime/cpu/epilogue.h"
#include "runtime/cpu/kernel.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/widen.h"

namespace dlc::cpu {

namespace {

// Both operands and the output as rank-r logical [batch…, rows, cols] views with element
// strides (0 along broadcast batch dims), r >= 3.
struct MatmulGeometry {
  Shape a_dims, a_strides, b_dims, b_strides, c_dims;
  int64_t m = 0, n = 0, k = 0;
};

// The fused epilogue: act(alpha * product + bias + residual), the bias a row of n values, the
// residual one value per result element (each or both absent), act a Relu or nothing.
struct Epilogue {
  float alpha = 1.0f;
  bool bias = false;
  bool residual = false;
  bool relu = false;
};

Epilogue epilogue(const KernelContext& ctx) {
  return {float(ctx.attrs.f("alpha", 1.0)), ctx.has_input(2), ctx.has_input(3), relu_epilogue(ctx)};
}

// Logical dims/strides of one operand, padded to `rank`; `transpose` swaps the last two.
void operand_view(Shape dims, bool transpose, size_t rank, Shape* out_dims, Shape* out_strides) {
  Shape st = onednn::row_major_strides(dims);
  const size_t r = dims.size();
  if (transpose) {
    std::swap(dims[r - 1], dims[r - 2]);
    std::swap(st[r - 1], st[r - 2]);
  }
  dims.insert(dims.begin(), rank - r, 1);
  st.insert(st.begin(), rank - r, 0);
  for (size_t i = 0; i + 2 < rank; ++i)
    if (dims[i] == 1) st[i] = 0;
  *out_dims = dims;
  *out_strides = st;
}

MatmulGeometry geometry(const KernelContext& ctx) {
  Shape a = ctx.inputs[0].dims, b = ctx.inputs[1].dims;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const size_t rank = std::max<size_t>({a.size(), b.size(), 3});
  MatmulGeometry g;
  operand_view(a, ctx.attrs.i("transpose_a", 0) != 0, rank, &g.a_dims, &g.a_strides);
  operand_view(b, ctx.attrs.i("transpose_b", 0) != 0, rank, &g.b_dims, &g.b_strides);
  g.m = g.a_dims[rank - 2];
  g.k = g.a_dims[rank - 1];
  g.n = g.b_dims[rank - 1];
  for (size_t i = 0; i + 2 < rank; ++i) g.c_dims.push_back(std::max(g.a_dims[i], g.b_dims[i]));
  g.c_dims.push_back(g.m);
  g.c_dims.push_back(g.n);
  if (num_elements(g.c_dims) != ctx.outputs[0].numel())
    ctx.fail("operands {} and {} do not give the output {}", shape_str(ctx.inputs[0].dims),
             shape_str(ctx.inputs[1].dims), shape_str(ctx.outputs[0].dims));
  if (ctx.has_input(2) && ctx.inputs[2].numel() != g.n)
    ctx.fail("bias {} is not a row of the {} output columns", shape_str(ctx.inputs[2].dims), g.n);
  if (ctx.has_input(3) && ctx.inputs[3].numel() != ctx.outputs[0].numel())
    ctx.fail("residual {} is not the output's shape {}", shape_str(ctx.inputs[3].dims),
             shape_str(ctx.outputs[0].dims));
  return g;
}

template <typename T>
void matmul_loop(const MatmulGeometry& g, const Epilogue& e, const T* a, const T* b, const T* bias, T* c) {
  const size_t rank = g.c_dims.size();
  const int64_t batches = num_elements(Shape(g.c_dims.begin(), g.c_dims.end() - 2));
  const int64_t as_m = g.a_strides[rank - 2], as_k = g.a_strides[rank - 1];
  const int64_t bs_k = g.b_strides[rank - 2], bs_n = g.b_strides[rank - 1];
#pragma omp parallel for collapse(2) schedule(static) if (batches * g.m * g.n * g.k > 32768)
  for (int64_t bi = 0; bi < batches; ++bi) {
    for (int64_t i = 0; i < g.m; ++i) {
      int64_t ao = 0, bo = 0, rem = bi;
      for (int64_t d = int64_t(rank) - 3; d >= 0; --d) {
        const int64_t idx = rem % g.c_dims[d];
        rem /= g.c_dims[d];
        ao += idx * g.a_strides[d];
        bo += idx * g.b_strides[d];
      }
      T* row = c + (bi * g.m + i) * g.n;
      std::fill(row, row + g.n, T(0));
      for (int64_t p = 0; p < g.k; ++p) {
        const T av = a[ao + i * as_m + p * as_k];
        const T* brow = b + bo + p * bs_k;
        for (int64_t j = 0; j < g.n; ++j) row[j] += av * brow[j * bs_n];
      }
      if (e.alpha != 1.0f)
        for (int64_t j = 0; j < g.n; ++j) row[j] = T(row[j] * e.alpha);
      if (bias)
        for (int64_t j = 0; j < g.n; ++j) row[j] += bias[j];
    }
  }
}

// oneDNN wants a dense-looking stride on size-1 (broadcast) batch dims rather than 0.
Shape dense_strides(const Shape& dims, Shape st) {
  for (int64_t i = int64_t(dims.size()) - 3; i >= 0; --i) {
    if (dims[i] != 1) continue;
    int64_t extent = 1;
    for (size_t j = size_t(i) + 1; j < dims.size(); ++j) extent = std::max(extent, st[j] * dims[j]);
    st[i] = extent;
  }
  return st;
}

// Whether B is transposed (its rows strided) and small enough to reorder into the layout oneDNN
// picks. oneDNN 2.6's brgemm matmul takes a slow path on a small strided B: the transformer's
// [512, 32] x [32, 32]^T ran 21 us against 13 us on the reordered B, the attention's batched
// [8, 16] x [16, 8]^T 16 us against 9 (the reorder 1 to 3 us). A large one it packs as fast
// either way, and the reorder would be an extra pass: the Fashion-MNIST model's [64, 3136] x
// [3136, 128]^T took 0.34 ms both ways, the reorder 0.25 ms more (ONEDNN_VERBOSE).
bool reorder_transposed_b(const MatmulGeometry& g) {
  constexpr int64_t kMaxReorderedElements = 32768;  // per matrix of B: 128 KB of f32
  return g.b_strides.back() != 1 && g.k * g.n <= kMaxReorderedElements;
}

// The argument id of the bias when it is a binary-add post-op.
constexpr int kBiasPostOpArg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1;

onednn::PrimitiveState build_matmul(const MatmulGeometry& g, const Epilogue& e, DType t) {
  using namespace onednn;
  auto a_md = strided_desc(g.a_dims, dense_strides(g.a_dims, g.a_strides), t);
  auto b_md = strided_desc(g.b_dims, dense_strides(g.b_dims, g.b_strides), t);
  auto c_md = plain_desc(g.c_dims, t);
  Shape bias_dims(g.c_dims.size(), 1);
  bias_dims.back() = g.n;
  const dnnl::memory::desc bias_md = e.bias ? plain_desc(bias_dims, t) : dnnl::memory::desc();
  // oneDNN adds its bias argument before the output scales: with alpha, the bias is a post-op.
  const bool bias_post_op = e.bias && e.alpha != 1.0f;
  dnnl::primitive_attr attr;
  if (e.alpha != 1.0f) attr.set_output_scales(0, {e.alpha});
  if (bias_post_op) {
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, bias_md);
    attr.set_post_ops(ops);
  }
  const auto b_want = reorder_transposed_b(g) ? any_format(b_md) : b_md;
  const dnnl::matmul::desc d = e.bias && !bias_post_op ? dnnl::matmul::desc(a_md, b_want, bias_md, c_md)
                                                       : dnnl::matmul::desc(a_md, b_want, c_md);
  dnnl::matmul::primitive_desc pd(d, attr, engine());
  PrimitiveState st;
  st.prim = dnnl::matmul(pd);
  st.args[DNNL_ARG_SRC] = Arg(a_md, pd.src_desc());
  st.args[DNNL_ARG_WEIGHTS] = Arg(b_md, pd.weights_desc());
  st.args[DNNL_ARG_DST] = Arg(c_md, pd.dst_desc());
  if (bias_post_op)
    st.args[kBiasPostOpArg] = Arg(bias_md, bias_md);
  else if (e.bias)
    st.args[DNNL_ARG_BIAS] = Arg(bias_md, pd.bias_desc());
  return st;
}

}  // namespace

void kernel_MatMul(const KernelContext& ctx) {
  if (run_widened(ctx, kernel_MatMul)) return;
  const MatmulGeometry g = geometry(ctx);
  const Epilogue e = epilogue(ctx);
  const TensorView &a = ctx.inputs[0], &b = ctx.inputs[1], &c = ctx.outputs[0];
  const void* bias = e.bias ? ctx.inputs[2].data : nullptr;
  const void* residual = e.residual ? ctx.inputs[3].data : nullptr;
  if (c.numel() == 0) return;
  if (a.dtype == DType::F32 && g.k > 0) {
    std::unique_ptr<KernelState> local;
    try {
      auto& st = onednn::cached_state<onednn::PrimitiveState>(ctx, local,
                                                              [&] { return build_matmul(g, e, a.dtype); });
      const int bias_arg = e.alpha != 1.0f ? kBiasPostOpArg : DNNL_ARG_BIAS;
      onednn::execute(st, {{DNNL_ARG_SRC, a.data}, {DNNL_ARG_WEIGHTS, b.data}, {bias_arg, bias}},
                      {{DNNL_ARG_DST, c.data}});
      apply_epilogue(c.as<float>(), static_cast<const float*>(residual), e.relu, c.numel());
    } catch (const dnnl::error& err) {
      ctx.fail("{} ({} x {})", onednn::describe(err), shape_str(a.dims), shape_str(b.dims));
    }
    return;
  }
  // The plain loop: other dtypes, and an empty inner dim (the product is zeros, the epilogue remains).
  dispatch_numeric(a.dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    matmul_loop<T>(g, e, a.as<T>(), b.as<T>(), static_cast<const T*>(bias), c.as<T>());
    apply_epilogue(c.as<T>(), static_cast<const T*>(residual), e.relu, c.numel());
  });
}

}  // namespace dlc::cpu
