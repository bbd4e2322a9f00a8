// The CUDA kernel emitters without a compiler: broadcast index arithmetic, expression-program
// validation, literals and templates, deterministic names, and the choices emitters make from
// shapes (vector path, rows per warp or block, column splits, workspace sizes).
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>

#include "codegen/cuda/broadcast_layout.h"
#include "codegen/cuda/cumsum_emitter.h"
#include "codegen/cuda/emit_util.h"
#include "codegen/cuda/integer_elementwise_emitter.h"
#include "codegen/cuda/multi_tensor.h"
#include "codegen/cuda/row_mapping.h"
#include "dlc/error.h"
#include "tests/unit/cuda_kernel_cases.h"

namespace dlc::codegen::cuda {
namespace {

TEST(CudaBroadcastLayout, CollapsesAndClassifies) {
  BroadcastLayout l = broadcast_layout({64, 128}, {{64, 128}, {128}, {}, {64, 1}});
  EXPECT_EQ(l.dims, (Shape{64, 128}));
  EXPECT_EQ(l.strides[1], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(l.strides[3], (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(l.access, (std::vector<Access>{Access::Full, Access::Strided, Access::Scalar, Access::Strided}));

  l = broadcast_layout({2, 3, 4}, {{2, 3, 4}, {1, 3, 4}});  // [2, 12] after merging 3 and 4
  EXPECT_EQ(l.dims, (Shape{2, 12}));
  EXPECT_EQ(l.strides[1], (std::vector<int64_t>{0, 1}));

  l = broadcast_layout({2, 1, 3, 4}, {{2, 1, 3, 4}, {4}});  // size-1 dims drop
  EXPECT_EQ(l.dims, (Shape{6, 4}));

  l = broadcast_layout({5, 6}, {{5, 6}, {5, 6}});
  EXPECT_EQ(l.dims, (Shape{30}));
  EXPECT_EQ(l.access, (std::vector<Access>{Access::Full, Access::Full}));

  l = broadcast_layout({}, {{}, {}});
  EXPECT_EQ(l.dims, (Shape{1}));
  EXPECT_THROW(broadcast_layout({4, 5}, {{3}}), Error);
  EXPECT_THROW(broadcast_layout({5}, {{2, 5}}), Error);
}

TEST(CudaExprProgram, OpsAreNamedAfterIrOps) {
  EXPECT_EQ(expr_op_from_name("ReluGrad"), ExprOp::ReluGrad);
  EXPECT_EQ(expr_op_from_name("Where"), ExprOp::Where);
  EXPECT_EQ(expr_op_from_name("Conv"), std::nullopt);
  EXPECT_EQ(expr_op_from_name("Input"), std::nullopt);
  EXPECT_EQ(expr_op_name(ExprOp::Sigmoid), "Sigmoid");
  EXPECT_EQ(expr_op_arity(ExprOp::Clip), 3);
}

TEST(CudaExprProgram, Listing) {
  const ExprProgram p = test::bias_relu_program(DType::F16, 2, 3);
  EXPECT_EQ(p.str(),
            "%0 = input x f16[2,3]\n"
            "%1 = input b f16[3]\n"
            "%2 = Add %0, %1\n"
            "%3 = Relu %2\n"
            "output y = %3 f16[2,3]\n");
}

// The message of the dlc::Error `p.validate()` throws.
std::string validation_error(const ExprProgram& p) {
  try {
    p.validate();
  } catch (const Error& e) {
    return e.what();
  }
  return "(valid)";
}

TEST(CudaExprProgram, ValidationNamesTheProblem) {
  ExprProgram p({4});
  const int x = p.input("x", DType::F32, {4});
  EXPECT_NE(validation_error(p).find("no outputs"), std::string::npos);
  p.output("y", p.op(ExprOp::Add, {x}), DType::F32);
  EXPECT_NE(validation_error(p).find("has 1 operands, needs 2"), std::string::npos) << validation_error(p);

  ExprProgram q({4});
  q.output("y", q.op(ExprOp::Neg, {3}), DType::F32);
  EXPECT_NE(validation_error(q).find("uses %3"), std::string::npos) << validation_error(q);

  ExprProgram r({4});
  r.output("y", r.input("x", DType::F32, {5}), DType::F32);
  EXPECT_NE(validation_error(r).find("does not broadcast"), std::string::npos) << validation_error(r);

  ExprProgram s({4});
  s.output("y", s.input("x", DType::F64, {4}), DType::F32);
  EXPECT_NE(validation_error(s).find("dtype f64"), std::string::npos) << validation_error(s);

  ExprProgram t({4});
  t.output("y", t.cast(t.input("x", DType::F32, {4}), DType::I64), DType::F32);
  EXPECT_NE(validation_error(t).find("casts to i64"), std::string::npos) << validation_error(t);
  EXPECT_THROW(emit_elementwise(t), Error);
}

TEST(CudaEmitUtil, Literals) {
  EXPECT_EQ(float_literal(1.0), "1.0f");
  EXPECT_EQ(float_literal(0.5), "0.5f");
  EXPECT_EQ(float_literal(1e-8), "1e-08f");
  EXPECT_EQ(float_literal(-2.0), "-2.0f");
  EXPECT_EQ(float_literal(std::numeric_limits<double>::infinity()), "dlc_inf()");
  EXPECT_EQ(float_literal(-std::numeric_limits<double>::infinity()), "(-dlc_inf())");
  EXPECT_EQ(double_literal(0.999), "0.999");
  EXPECT_EQ(double_literal(3.0), "3.0");
  // Shortest text that reads back as the same float.
  for (double v : {0.1, 0.9, 0.999, 1e-5, 3.14159265358979, 123456.789}) {
    const std::string s = float_literal(v);
    EXPECT_EQ(std::strtof(s.c_str(), nullptr), float(v)) << s;
  }
}

TEST(CudaEmitUtil, TemplatesAndNames) {
  EXPECT_EQ(fill("a ${X} b ${Y} ${X}", {{"X", "1"}, {"Y", "2"}}), "a 1 b 2 1");
  EXPECT_THROW(fill("${X} ${Z}", {{"X", "1"}}), Error);
  EXPECT_THROW(fill("${X}", {{"X", "1"}, {"UNUSED", "2"}}), Error);
  EXPECT_EQ(kernel_name("softmax_fwd", DType::BF16, "4x8"), "dlc_softmax_fwd_bf16_4x8");
  EXPECT_EQ(dims_tag({}), "scalar");
  EXPECT_EQ(index_type(1000), "int");
  EXPECT_EQ(index_type(int64_t(1) << 31), "long long");
  EXPECT_EQ(grid_for(0, 256), 1);
  EXPECT_EQ(grid_for(257, 256), 2);
  EXPECT_EQ(grid_for(int64_t(1) << 40, 256), int64_t(1) << 20);
  EXPECT_EQ(cuda_type(DType::BF16), "__nv_bfloat16");
  EXPECT_THROW(cuda_type(DType::F64), Error);
}

TEST(CudaEmitters, EveryCaseIsCompleteAndDeterministic) {
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    const std::vector<KernelSource> a = test::kernel_cases(t), b = test::kernel_cases(t);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].source, b[i].source) << a[i].name;
      const std::string base = a[i].name.substr(0, a[i].name.size() - 3);
      EXPECT_EQ(a[i].name, base + ".cu");
      EXPECT_EQ(a[i].source.find("${"), std::string::npos) << a[i].name;
      EXPECT_EQ(a[i].workspace_bytes % 256, 0) << a[i].name;
      for (const KernelEntry& e : a[i].entries) {
        EXPECT_NE(a[i].source.find(") " + e.name + "(\n"), std::string::npos) << e.name << " is not defined";
        EXPECT_EQ(e.name.rfind(base, 0), 0u) << e.name << " is not named after its source";
      }
      // Only sources with 16-bit tensors include the 16-bit headers (they cost compile time).
      if (a[i].kind != "elementwise") {
        EXPECT_EQ(a[i].source.find("cuda_bf16.h") != std::string::npos, t == DType::BF16) << a[i].name;
      }
    }
  }
}

TEST(CudaEmitters, ElementwiseNamesFollowTheProgram) {
  const KernelSource a = emit_elementwise(test::bias_relu_program(DType::F32));
  const KernelSource b = emit_elementwise(test::bias_relu_program(DType::F16));
  const KernelSource c = emit_elementwise(test::bias_relu_program(DType::F32, 64, 256));
  EXPECT_NE(a.entries[0].name, b.entries[0].name);
  EXPECT_NE(a.entries[0].name, c.entries[0].name);
  EXPECT_EQ(a.entries[0].params, (std::vector<std::string>{"x", "b", "y"}));
}

TEST(CudaEmitters, ElementwiseVectorPathWhereRowsAllowIt) {
  // Rows of 128: 4-wide loads of x and b. Rows of 7: one element at a time.
  EXPECT_NE(emit_elementwise(test::bias_relu_program(DType::F32))
                .source.find("dlc_load4(in1 + dlc_offset1(i), a1)"),
            std::string::npos);
  EXPECT_EQ(emit_elementwise(test::bias_relu_program(DType::F32, 6, 7)).source.find("dlc_load4"),
            std::string::npos);
  // A column broadcast ([64, 1]) is read once per 4 outputs.
  ExprProgram p({64, 128});
  p.output("y", p.op(ExprOp::Mul, {p.input("x", DType::F32, {64, 128}), p.input("s", DType::F32, {64, 1})}),
           DType::F32);
  EXPECT_NE(emit_elementwise(p).source.find("dlc_splat4(dlc_to_float(in1[dlc_offset1(i)]), a1)"),
            std::string::npos);
  const KernelEntry e = emit_elementwise(p).entries[0];
  EXPECT_EQ(e.launch.grid[0], 64 * 128 / 1024);
  EXPECT_EQ(e.launch.block[0], 256);
}

TEST(CudaEmitters, RowMapping) {
  EXPECT_TRUE(row_mapping({100, 1024, 1}).warp_per_row);
  EXPECT_EQ(row_mapping({100, 1024, 1}).grid, 13);
  const RowMapping long_rows = row_mapping({3, 50000, 1});
  EXPECT_FALSE(long_rows.warp_per_row);
  EXPECT_EQ(long_rows.block, 1024);
  EXPECT_EQ(long_rows.grid, 3);
  EXPECT_EQ(column_splits(65536, 2), 132);
  EXPECT_EQ(column_splits(100, 2), 1);
  EXPECT_EQ(column_splits(1 << 20, 1000), 1);
}

TEST(CudaEmitters, WorkspacesAndSplits) {
  const KernelSource cols = emit_reduce(test::reduce_view(ReduceOp::Sum, DType::F32, 1, 65536, 64));
  ASSERT_EQ(cols.entries.size(), 2u);
  EXPECT_EQ(cols.entries[0].params, (std::vector<std::string>{"x", "workspace"}));
  EXPECT_EQ(cols.workspace_bytes, 132 * 64 * 4);
  EXPECT_EQ(emit_reduce(test::reduce_view(ReduceOp::Max, DType::F32, 64, 100, 256)).entries.size(), 1u);

  // Few long rows are split: (split, row) blocks into the workspace, then the final combine.
  EXPECT_EQ(row_splits(1, 1 << 20), 128);    // 8192 elements a split at least
  EXPECT_EQ(row_splits(1, 100 << 20), 264);  // two waves of 132 SMs
  EXPECT_EQ(row_splits(8, 1 << 20), 33);
  EXPECT_EQ(row_splits(1, 8191), 1);
  EXPECT_EQ(row_splits(264, 1 << 20), 1);
  const KernelSource whole = emit_reduce(test::reduce_view(ReduceOp::Mean, DType::BF16, 1, 1 << 20, 1));
  ASSERT_EQ(whole.entries.size(), 2u);
  EXPECT_EQ(whole.entries[0].params, (std::vector<std::string>{"x", "workspace"}));
  EXPECT_EQ(whole.entries[0].launch.grid[0], 128);
  EXPECT_EQ(whole.entries[0].launch.grid[1], 1);
  EXPECT_EQ(whole.entries[1].params, (std::vector<std::string>{"workspace", "y"}));
  EXPECT_EQ(whole.workspace_bytes, 512);
  EXPECT_NE(whole.source.find("dlc_combine(acc, dlc_to_float(x[row * kExtent + c]))"), std::string::npos);
  EXPECT_NE(whole.source.find("acc / 1048576.0f"), std::string::npos);  // the mean divides once, at the end
  const KernelSource bias = emit_reduce(reduce_spec(ReduceOp::Sum, DType::F32, {64, 8, 64, 64}, {0, 2, 3}));
  ASSERT_EQ(bias.entries.size(), 2u);
  EXPECT_EQ(bias.entries[0].launch.grid[0], 32);  // 33 would leave splits under 8192 elements
  EXPECT_EQ(bias.entries[0].launch.grid[1], 8);
  EXPECT_EQ(bias.workspace_bytes, 1024);
  EXPECT_NE(bias.source.find("dlc_gather_index(row, c)"), std::string::npos);

  const KernelSource ln = emit_layer_norm_backward({DType::F16, 64, 768, 1e-5, true, std::nullopt});
  ASSERT_EQ(ln.entries.size(), 2u);
  EXPECT_EQ(ln.workspace_bytes, 512);
  const KernelSource ln_split = emit_layer_norm_backward({DType::F16, 16384, 64, 1e-5, true, std::nullopt});
  ASSERT_EQ(ln_split.entries.size(), 3u);
  EXPECT_EQ(ln_split.entries[1].params[3], "workspace+131072");

  const KernelSource ce =
      emit_cross_entropy_forward({DType::F32, DType::I64, 64, 1000, 1, "none", std::nullopt, false});
  EXPECT_EQ(ce.entries.size(), 1u);
  EXPECT_EQ(ce.workspace_bytes, 0);
  EXPECT_EQ(
      emit_cross_entropy_backward({DType::F32, DType::I64, 64, 10, 1, "mean", -1, false}).entries.size(), 2u);
  EXPECT_EQ(emit_cross_entropy_backward({DType::F32, DType::I64, 64, 10, 1, "mean", std::nullopt, false})
                .entries.size(),
            1u);

  EXPECT_EQ(emit_embedding_backward({DType::F32, DType::I64, 10, 4, 3}).entries.size(), 2u);
  const KernelSource emb = emit_embedding_backward({DType::BF16, DType::I64, 10, 4, 3});
  EXPECT_EQ(emb.entries.size(), 3u);
  EXPECT_EQ(emb.workspace_bytes, 256);
  // Gather on axis 1 of [3, 10, 40]: three blocks of a [10, 40] table, each gathered alike.
  const KernelSource outer = emit_embedding_backward({DType::BF16, DType::I64, 10, 40, 3, 3});
  EXPECT_NE(outer.source.find("constexpr Index kOuter = 3;"), std::string::npos) << outer.source;
  EXPECT_NE(outer.source.find("atomicAdd(accum + (o * kVocab + r) * kDim + p % kDim"), std::string::npos)
      << outer.source;
  EXPECT_EQ(outer.workspace_bytes, align256(3 * 10 * 40 * 4));
  EXPECT_NE(outer.name, emit_embedding_backward({DType::BF16, DType::I64, 10, 40, 3}).name);
  EXPECT_THROW(emit_embedding_gather({DType::F32, DType::I64, 10, 4, 3, 0}), Error);
}

// A fused reduction reads its program's result where the plain kernel reads x: the program's
// inputs are the parameters, the result is never stored, and the name follows the program.
TEST(CudaEmitters, FusedReductionReadsItsProgram) {
  const KernelSource rows = test::fused_reduce(DType::F16, ReduceOp::Sum, 96, 1000, 96, 1000, 1);
  EXPECT_EQ(rows.kind, "fused_reduce_rows");
  ASSERT_EQ(rows.entries.size(), 1u);
  EXPECT_EQ(rows.entries[0].params, (std::vector<std::string>{"x", "b", "y"}));
  EXPECT_NE(rows.source.find("acc = dlc_combine(acc, dlc_value(in0, in1, xr + c))"), std::string::npos);
  EXPECT_EQ(rows.source.find("dlc_load4"), std::string::npos);
  // A second program output is stored where its element is read (here in the split's first pass).
  const KernelSource split = test::fused_reduce(DType::F16, ReduceOp::Sum, 65536, 64, 1, 65536, 64, true);
  ASSERT_EQ(split.entries.size(), 2u);
  EXPECT_EQ(split.entries[0].params, (std::vector<std::string>{"x", "b", "r", "workspace"}));
  EXPECT_NE(split.source.find("dlc_value(in0, in1, out1, (o * kExtent + e) * kInner + i)"),
            std::string::npos);
  EXPECT_NE(split.source.find("  out1[i] = dlc_from_float<__half>(r1);"), std::string::npos);
  EXPECT_NE(test::fused_reduce(DType::F32, ReduceOp::Sum, 96, 1000, 96, 1000, 1).entries[0].name,
            rows.entries[0].name);
  EXPECT_NE(rows.entries[0].name,
            emit_reduce(test::reduce_view(ReduceOp::Sum, DType::F32, 96, 1000, 1)).entries[0].name);
  // The view must cover the program's elements, and the result be f32.
  EXPECT_THROW(test::fused_reduce(DType::F32, ReduceOp::Sum, 96, 1000, 96, 999, 1), Error);
  const ExprProgram half = test::bias_relu_program(DType::F16);
  EXPECT_THROW(emit_reduce(test::reduce_view(ReduceOp::Sum, DType::F32, 64, 128, 1, &half)), Error);
}

// The view a reduction's axes give: [outer, extent, inner] when the reduced axes are adjacent once
// size-1 dims are ignored, else gathered over merged dims (a convolution bias gradient).
TEST(CudaEmitters, ReductionViews) {
  auto view = [](const Shape& dims, std::vector<int64_t> axes) {
    const ReduceSpec s = reduce_spec(ReduceOp::Sum, DType::F32, dims, std::move(axes));
    return std::vector<int64_t>{s.outer, s.extent, s.inner, int64_t(s.gather_dims.size())};
  };
  EXPECT_EQ(view({8, 6, 12, 12}, {2, 3}), (std::vector<int64_t>{48, 144, 1, 0}));
  EXPECT_EQ(view({8, 6, 12, 12}, {0, 1}), (std::vector<int64_t>{1, 48, 144, 0}));
  EXPECT_EQ(view({8, 6, 12, 12}, {}), (std::vector<int64_t>{1, 6912, 1, 0}));
  EXPECT_EQ(view({8, 1, 5}, {0, -1}), (std::vector<int64_t>{1, 40, 1, 0}));  // size 1 between: adjacent
  EXPECT_EQ(view({8, 6, 1}, {2}), (std::vector<int64_t>{48, 1, 1, 0}));      // only a size-1 axis
  EXPECT_EQ(view({8, 6, 12, 12}, {0, 2, 3}), (std::vector<int64_t>{6, 1152, 1, 3}));
  const ReduceSpec bias = reduce_spec(ReduceOp::Mean, DType::F16, {8, 6, 12, 12}, {3, 0, 2});
  EXPECT_EQ(bias.gather_dims, (Shape{8, 6, 144}));
  EXPECT_EQ(bias.gather_reduced, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(view({2, 3, 4, 5, 6}, {1, 3}), (std::vector<int64_t>{48, 15, 1, 5}));
  EXPECT_THROW(reduce_spec(ReduceOp::Sum, DType::F32, {2, 3}, {2}), Error);

  // Row r of the bias gradient reads x[n, r, p] at n * 864 + r * 144 + p, c = n * 144 + p.
  const KernelSource ks = emit_reduce(bias);
  EXPECT_EQ(ks.kind, "reduce_gather");
  EXPECT_NE(
      ks.source.find("  offset += c % 144 * 1;\n  c /= 144;\n  offset += r * 144;\n  offset += c * 864;\n"),
      std::string::npos)
      << ks.source;
  EXPECT_NE(ks.source.find("acc / 1152.0f"), std::string::npos);  // the mean over N, H and W
  EXPECT_EQ(ks.source.find("dlc_load4"), std::string::npos);
  EXPECT_NE(ks.entries[0].name,
            emit_reduce(reduce_spec(ReduceOp::Mean, DType::F16, {8, 6, 144}, {1})).entries[0].name);
}

// Every reduction is a sum or a max of a map of the element, then a finish.
TEST(CudaEmitters, ReductionOpsMapAndFinish) {
  const KernelSource min = emit_reduce(test::reduce_view(ReduceOp::Min, DType::F16, 96, 1000, 1));
  EXPECT_NE(min.source.find("float dlc_map(float v) { return -v; }"), std::string::npos);
  EXPECT_NE(min.source.find("float dlc_finish(float acc) { return -acc; }"), std::string::npos);
  EXPECT_NE(min.source.find("for (int k = 0; k < 4; ++k) v[k] = dlc_map(v[k]);"), std::string::npos);
  EXPECT_NE(min.source.find("dlc_row_max(acc, scratch)"), std::string::npos);
  const KernelSource l2 = emit_reduce(test::reduce_view(ReduceOp::L2, DType::F32, 1, 65536, 64));
  EXPECT_NE(l2.source.find("dlc_combine(acc, dlc_map(dlc_to_float(x[(o * kExtent + e) * kInner + i])))"),
            std::string::npos);
  EXPECT_NE(l2.source.find("return sqrtf(acc);"), std::string::npos);
  // The final pass combines partial results, already mapped.
  EXPECT_EQ(l2.source.find("dlc_map(partial"), std::string::npos);
  EXPECT_NE(emit_reduce(test::reduce_view(ReduceOp::LogSum, DType::F32, 8, 100, 1)).source.find("logf(acc)"),
            std::string::npos);
  // A product combines by multiplication, from 1, on the warp and the block.
  const KernelSource prod = emit_reduce(test::reduce_view(ReduceOp::Prod, DType::F32, 300, 20000, 1));
  EXPECT_NE(prod.source.find("float acc = 1.0f;"), std::string::npos) << prod.source;
  EXPECT_NE(prod.source.find("return acc * v;"), std::string::npos) << prod.source;
  EXPECT_NE(prod.source.find("dlc_row_prod(acc, scratch)"), std::string::npos) << prod.source;
  // Sum, mean and max have no map.
  EXPECT_EQ(emit_reduce(test::reduce_view(ReduceOp::Mean, DType::F32, 8, 100, 1)).source.find("dlc_map"),
            std::string::npos);
}

// ArgMax/ArgMin scan the axis in order with the CPU kernel's comparison; TopKIndices its ranking.
TEST(CudaEmitters, ArgExtremum) {
  const KernelSource first = emit_arg_extremum({DType::BF16, true, false, 96, 1000, 1});
  EXPECT_EQ(first.kind, "argmax");
  EXPECT_NE(first.source.find("if (v > best) {"), std::string::npos);
  EXPECT_NE(first.source.find("long long* __restrict__ y"), std::string::npos);
  ASSERT_EQ(first.entries.size(), 1u);
  EXPECT_EQ(first.entries[0].params, (std::vector<std::string>{"x", "y"}));
  const KernelSource last = emit_arg_extremum({DType::F32, false, true, 3, 7, 50});
  EXPECT_EQ(last.kind, "argmin");
  EXPECT_NE(last.source.find("if (v <= best) {"), std::string::npos);
  EXPECT_NE(last.entries[0].name, emit_arg_extremum({DType::F32, false, false, 3, 7, 50}).entries[0].name);
  EXPECT_THROW(emit_arg_extremum({DType::I64, true, false, 3, 7, 50}), Error);
  EXPECT_THROW(emit_arg_extremum({DType::F32, true, false, 3, 0, 50}), Error);
  // TopKIndices: k and the direction in the kernel and its name; k past the axis is refused.
  const KernelSource top = emit_top_k_indices({DType::F16, false, 4, 3, 7, 50});
  EXPECT_EQ(top.kind, "bottomk");
  EXPECT_NE(top.source.find("constexpr Index kK = 4;"), std::string::npos);
  EXPECT_NE(top.source.find("constexpr bool kLargest = false;"), std::string::npos);
  EXPECT_EQ(top.entries[0].params, (std::vector<std::string>{"x", "y"}));
  EXPECT_NE(top.entries[0].name, emit_top_k_indices({DType::F16, false, 3, 3, 7, 50}).entries[0].name);
  EXPECT_THROW(emit_top_k_indices({DType::F32, true, 8, 3, 7, 50}), Error);
}

// NegativeLogLikelihoodLoss is the cross-entropy forward on log-probabilities: no softmax.
TEST(CudaEmitters, NllLossForward) {
  const KernelSource nll = emit_cross_entropy_forward({DType::F16, DType::I64, 8, 10, 5, "mean", -1, true});
  EXPECT_EQ(nll.kind, "nll_loss_fwd");
  EXPECT_NE(nll.source.find("constexpr float log_sum = 0.0f;"), std::string::npos);
  EXPECT_EQ(nll.source.find("dlc_row_softmax_stats(scores"), std::string::npos);
  EXPECT_NE(nll.source.find("weight && valid ? dlc_to_float(weight[label]) : 1.0f"), std::string::npos);
  ASSERT_EQ(nll.entries.size(), 2u);
  EXPECT_EQ(nll.entries[0].params,
            (std::vector<std::string>{"scores", "labels", "weight", "workspace", "loss", "log_prob"}));
  EXPECT_NE(
      nll.entries[0].name,
      emit_cross_entropy_forward({DType::F16, DType::I64, 8, 10, 5, "mean", -1, false}).entries[0].name);
  EXPECT_THROW(emit_cross_entropy_backward({DType::F16, DType::I64, 8, 10, 5, "mean", -1, true}), Error);
}

TEST(CudaEmitters, RejectBadSpecs) {
  EXPECT_THROW(emit_reduce(test::reduce_view(ReduceOp::Sum, DType::F64, 1, 1, 1)), Error);
  EXPECT_THROW(emit_reduce(test::reduce_view(ReduceOp::Sum, DType::F32, 0, 1, 1)), Error);
  EXPECT_THROW(emit_softmax_forward({DType::I32, 1, 1, 1, false}), Error);
  EXPECT_THROW(emit_cross_entropy_forward({DType::F32, DType::F32, 1, 2, 1, "mean", std::nullopt, false}),
               Error);
  EXPECT_THROW(emit_cross_entropy_forward({DType::F32, DType::I64, 1, 2, 1, "avg", std::nullopt, false}),
               Error);
  EXPECT_THROW(emit_embedding_gather({DType::F32, DType::F16, 1, 1, 1}), Error);
  EXPECT_THROW(emit_sgd_update({DType::I64, DType::I64, 0, 0, 0, false}), Error);
  EXPECT_THROW(emit_rmsprop_update({DType::F32, DType::F32, 0.99, 1e-8, 0, 0.9, true}),
               Error);  // three states
  EXPECT_THROW(emit_adam_update({DType::BF16, DType::F32, 0.9, 0.999, 1e-8, 0, false}), Error);  // wider grad
  EXPECT_THROW(emit_adam_update({DType::F16, DType::BF16, 0.9, 0.999, 1e-8, 0, false}), Error);
}

// Copies: a slice in range checks nothing; concat reads the first source in range, checking only
// the bounds an axis can break; constant padding fills; edge and reflect remap coordinates; a transpose
// permutes them.
TEST(CudaEmitters, CopyKernels) {
  const KernelSource slice = emit_copy(test::slice_case(DType::F32));
  EXPECT_EQ(slice.source.find("if ("), std::string::npos) << slice.source;
  EXPECT_NE(slice.source.find("const Index c1 = -2 * o1 + 8;"), std::string::npos) << slice.source;
  const KernelSource concat = emit_copy(test::concat_case(DType::F16));
  EXPECT_NE(concat.source.find("if (c1 < 3) {"), std::string::npos) << concat.source;
  EXPECT_NE(concat.source.find("if (c1 >= 0 && c1 < 1) {"), std::string::npos) << concat.source;
  EXPECT_NE(concat.source.find("if (c1 >= 0) {"), std::string::npos) << concat.source;
  EXPECT_NE(concat.source.find("out0[i] = in2[o0 * 20 + c1 * 4 + o2];"), std::string::npos) << concat.source;
  EXPECT_EQ(concat.entries.at(0).params, (std::vector<std::string>{"in0", "in1", "in2", "out0"}));
  const KernelSource pad = emit_copy(test::pad_case(DType::BF16, "constant"));
  EXPECT_NE(pad.source.find("out0[i] = dlc_from_float<T>(-1.5f);"), std::string::npos) << pad.source;
  EXPECT_NE(emit_copy(test::pad_case(DType::F32, "edge")).source.find("dlc_clamp(o0 - 1, 3)"),
            std::string::npos);
  EXPECT_NE(emit_copy(test::pad_case(DType::F32, "reflect")).source.find("dlc_reflect(o0 - 1, 4, 6)"),
            std::string::npos);
  EXPECT_NE(emit_copy(test::pad_case(DType::F32, "constant")).source, pad.source);
  CopySpec bad = test::concat_case(DType::F32);
  bad.mode = "edge";
  EXPECT_THROW(emit_copy(bad), Error);  // edge needs one source
  bad.mode = "wrap";
  EXPECT_THROW(emit_copy(bad), Error);
  bad = test::slice_case(DType::F32);
  bad.sources[0].step.pop_back();
  EXPECT_THROW(emit_copy(bad), Error);
  EXPECT_THROW(emit_copy(test::slice_case(DType::F64)), Error);
  // A transpose reads input [2, 3, 5] at (o1, o2, o0) of output [5, 2, 3], in range everywhere.
  const KernelSource transpose = emit_copy(test::transpose_case(DType::F32));
  EXPECT_NE(transpose.source.find("out0[i] = in0[o1 * 15 + o2 * 5 + o0];"), std::string::npos)
      << transpose.source;
  EXPECT_NE(transpose.name,
            emit_copy(CopySpec{DType::F32, {5, 2, 3}, {{{5, 2, 3}, {0, 0, 0}, {1, 1, 1}, {}, {}}}}).name);
  bad = test::transpose_case(DType::F32);
  bad.sources[0].out_axis = {0, 0, 1};
  EXPECT_THROW(emit_copy(bad), Error);  // no permutation
}

// Tile wraps its coordinates; SliceGrad reads dy where the divisors divide, filling zeros
// elsewhere; Split's copies share one source, one kernel and output each.
TEST(CudaEmitters, TileSliceGradAndSplitCopies) {
  const KernelSource tile = emit_copy(test::tile_case(DType::F32));
  EXPECT_NE(tile.source.find("const Index c1 = (o1) % 3;"), std::string::npos) << tile.source;
  EXPECT_EQ(tile.source.find("if ("), std::string::npos) << tile.source;
  const KernelSource grad = emit_copy(test::slice_grad_case(DType::F16));
  EXPECT_NE(grad.source.find("const Index c1 = (-1 * o1 + 8) / 2;"), std::string::npos) << grad.source;
  EXPECT_NE(grad.source.find("(o0 - 1) >= 0 && (o0 - 1) % 2 == 0 && (-1 * o1 + 8) >= 0"), std::string::npos)
      << grad.source;
  EXPECT_NE(grad.source.find("out0[i] = dlc_from_float<T>(0.0f);"), std::string::npos) << grad.source;
  const KernelSource split = emit_copies(test::split_cases(DType::BF16));
  ASSERT_EQ(split.entries.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(split.entries[k].name, split.name.substr(0, split.name.size() - 3) + "_" + std::to_string(k));
    EXPECT_EQ(split.entries[k].params, (std::vector<std::string>{"in0", "out" + std::to_string(k)}));
  }
  EXPECT_NE(split.source.find("out2[i] = in0[o0 * 36 + c1 * 4 + o2];"), std::string::npos) << split.source;
  CopySpec bad = test::slice_grad_case(DType::F32);
  bad.sources[0].divisor[0] = 0;
  EXPECT_THROW(emit_copy(bad), Error);
  bad.sources[0].divisor[0] = 2;
  bad.mode = "wrap";
  EXPECT_THROW(emit_copy(bad), Error);  // wrap reads every coordinate: no divisors
  std::vector<CopySpec> mixed = test::split_cases(DType::F32);
  mixed[1].dtype = DType::F16;
  EXPECT_THROW(emit_copies(mixed), Error);
  EXPECT_THROW(emit_copies({}), Error);
}

// GatherElements reads the data at the index on the axis (negative ones wrapped, others zero) and
// at the output's coordinates elsewhere.
TEST(CudaEmitters, GatherElements) {
  const KernelSource ks = emit_gather_elements({DType::F16, DType::I32, {3, 5, 4}, {3, 2, 4}, 1});
  EXPECT_NE(ks.source.find("using I = int;"), std::string::npos) << ks.source;
  EXPECT_NE(ks.source.find("if (j < 0) j += kAxisDim;"), std::string::npos) << ks.source;
  EXPECT_NE(ks.source.find("out0[i] = j >= 0 && j < kAxisDim ? in0[o0 * 20 + Index(j) * 4 + o2] : "
                           "dlc_from_float<T>(0.0f);"),
            std::string::npos)
      << ks.source;
  ASSERT_EQ(ks.entries.size(), 1u);
  EXPECT_EQ(ks.entries[0].params, (std::vector<std::string>{"in0", "in1", "out0"}));
  EXPECT_THROW(emit_gather_elements({DType::F32, DType::F32, {3, 5}, {3, 2}, 1}), Error);     // float indices
  EXPECT_THROW(emit_gather_elements({DType::F32, DType::I64, {3, 5}, {3, 2, 1}, 1}), Error);  // rank
  EXPECT_THROW(emit_gather_elements({DType::F32, DType::I64, {3, 5}, {4, 2}, 1}),
               Error);  // 4 > 3 off the axis
  EXPECT_THROW(emit_gather_elements({DType::F32, DType::I64, {3, 5}, {3, 2}, 2}), Error);  // axis
}

// GatherElementsGrad: a thread per dx element sums, in double and in index order, the dy elements of
// its line whose index lands on it; rows past the indices' extent off the axis stay zero.
TEST(CudaEmitters, GatherElementsBackward) {
  const KernelSource ks = emit_gather_elements_backward({DType::BF16, DType::I32, {3, 4}, {2, 6}, 1});
  EXPECT_NE(ks.source.find("if (o0 < 2) {"), std::string::npos) << ks.source;
  EXPECT_NE(ks.source.find("const Index line = o0 * 6;"), std::string::npos) << ks.source;
  EXPECT_NE(ks.source.find("for (Index k = 0; k < 6; ++k) {"), std::string::npos) << ks.source;
  EXPECT_NE(ks.source.find("if (j == (long long)o1) sum += double(dlc_to_float(in0[line + k * 1]));"),
            std::string::npos)
      << ks.source;
  EXPECT_NE(ks.source.find("out0[i] = dlc_from_float<T>(float(sum));"), std::string::npos) << ks.source;
  EXPECT_EQ(ks.entries.at(0).params, (std::vector<std::string>{"in0", "in1", "out0"}));
  EXPECT_EQ(ks.entries.at(0).launch.grid[0] * 256, 256u) << "a thread per dx element (12)";
  EXPECT_THROW(emit_gather_elements_backward({DType::I64, DType::I64, {3, 4}, {3, 4}, 1}),
               Error);  // not float
  EXPECT_THROW(emit_gather_elements_backward({DType::F32, DType::I64, {3, 4}, {4, 4}, 1}), Error);  // 4 > 3
}

// ReduceLogSumExp is the softmax forward writing each row's max + log(sum), a non-finite max
// shifting by 0; it has no backward kernel.
TEST(CudaEmitters, ReduceLogSumExp) {
  const KernelSource lse = emit_softmax_forward({DType::BF16, 4, 50, 9, false, true});
  EXPECT_EQ(lse.kind, "logsumexp");
  EXPECT_NE(lse.source.find("if (!isfinite(max)) max = 0.0f;"), std::string::npos) << lse.source;
  EXPECT_NE(lse.source.find("y[row] = dlc_from_float<T>(max + logf(sum));"), std::string::npos) << lse.source;
  EXPECT_EQ(emit_softmax_forward({DType::BF16, 4, 50, 9, false}).source.find("isfinite"), std::string::npos);
  EXPECT_THROW(emit_softmax_backward({DType::F32, 4, 50, 9, false, true}), Error);
}

// Instance norm is the layer-norm forward with scale and bias indexed by the row's channel.
TEST(CudaEmitters, InstanceNormForward) {
  const KernelSource ln = emit_layer_norm_forward({DType::F16, 6, 200, 1e-5, true, std::nullopt});
  const KernelSource in = emit_layer_norm_forward({DType::F16, 6, 200, 1e-5, true, std::nullopt, 3});
  EXPECT_NE(ln.source.find("const Index p = c;"), std::string::npos) << ln.source;
  EXPECT_NE(in.source.find("const Index p = row % 3;"), std::string::npos) << in.source;
  EXPECT_EQ(in.name, "dlc_instance_norm_fwd_f16_6x200_c3.cu");
  EXPECT_NE(emit_layer_norm_forward({DType::F16, 6, 200, 1e-5, true, std::nullopt, 2}).name, in.name);
  EXPECT_THROW(emit_layer_norm_forward({DType::F16, 6, 200, 1e-5, true, std::nullopt, 4}), Error);  // 6 % 4
}

// Integer elementwise kernels in the storage types, operands broadcast: a scalar reads element 0, a
// full operand element i, another its strided offset.
TEST(CudaEmitters, IntegerElementwise) {
  const TensorType i64_scalar{DType::I64, {}};
  const KernelSource counter = emit_integer_elementwise({"Add", {i64_scalar, i64_scalar}, i64_scalar});
  EXPECT_NE(counter.source.find("out0[i] = R(a + b);"), std::string::npos) << counter.source;
  EXPECT_EQ(counter.source.find("dlc_div"), std::string::npos) << "helpers only where used";
  const TensorType i32_col{DType::I32, {4, 1}}, i32_row{DType::I32, {1, 5}}, i32_out{DType::I32, {4, 5}};
  const KernelSource max = emit_integer_elementwise({"Max", {i32_col, i32_row}, i32_out});
  EXPECT_NE(max.source.find("const int a = in0[i / 5];"), std::string::npos) << max.source;
  EXPECT_NE(max.source.find("const int b = in1[i % 5];"), std::string::npos) << max.source;
  EXPECT_NE(max.source.find("out0[i] = a < b ? b : a;"), std::string::npos) << max.source;
  EXPECT_NE(emit_integer_elementwise({"Sub", {i32_col, i32_row}, i32_out}).name, max.name);
  const KernelSource eq =
      emit_integer_elementwise({"Equal", {{DType::I64, {6, 1}}, {DType::I64, {5}}}, {DType::Bool, {6, 5}}});
  EXPECT_NE(eq.source.find("using R = unsigned char;"), std::string::npos) << eq.source;
  EXPECT_NE(eq.source.find("out0[i] = R(a == b);"), std::string::npos) << eq.source;
  // Div and Mod: the helpers, the signedness and Mod's fmod (a different kernel).
  const KernelSource div = emit_integer_elementwise({"Div", {i32_col, i32_row}, i32_out});
  EXPECT_NE(div.source.find("out0[i] = dlc_div(a, b);"), std::string::npos) << div.source;
  EXPECT_NE(div.source.find("T dlc_div(T a, T b)"), std::string::npos) << div.source;
  const KernelSource python_mod = emit_integer_elementwise({"Mod", {i32_col, i32_row}, i32_out});
  const KernelSource c_mod = emit_integer_elementwise({"Mod", {i32_col, i32_row}, i32_out, true});
  EXPECT_NE(python_mod.source.find("out0[i] = dlc_mod(a, b, false);"), std::string::npos)
      << python_mod.source;
  EXPECT_NE(c_mod.source.find("out0[i] = dlc_mod(a, b, true);"), std::string::npos) << c_mod.source;
  EXPECT_NE(python_mod.name, c_mod.name);
  // Pow by the operands' kinds; the result has the base's type.
  const TensorType f16{DType::F16, {3}}, i64{DType::I64, {3}}, f32{DType::F32, {3}};
  EXPECT_NE(emit_integer_elementwise({"Pow", {i64, i64}, i64}).source.find("dlc_int_pow(a, (long long)b)"),
            std::string::npos);
  EXPECT_NE(emit_integer_elementwise({"Pow", {i64, f32}, i64})
                .source.find("pow(double(a), double(dlc_to_float(b)))"),
            std::string::npos);
  const KernelSource half_base = emit_integer_elementwise({"Pow", {f16, i64}, f16});
  EXPECT_NE(half_base.source.find("dlc_from_float<R>(powf(dlc_to_float(a), float(b)))"), std::string::npos)
      << half_base.source;
  EXPECT_NE(half_base.source.find("cuda_fp16.h"), std::string::npos) << "the 16-bit type's prelude";
  const KernelSource where = emit_integer_elementwise(
      {"Where", {{DType::Bool, {3, 1}}, {DType::I64, {3, 4}}, {DType::I64, {4}}}, {DType::I64, {3, 4}}});
  EXPECT_NE(where.source.find("out0[i] = a != 0 ? b : c;"), std::string::npos) << where.source;
  EXPECT_EQ(where.entries.at(0).params, (std::vector<std::string>{"in0", "in1", "in2", "out0"}));
  // Cast through int64 or double, as the CPU kernel.
  const TensorType i32{DType::I32, {3}}, u8{DType::U8, {3}}, boolean{DType::Bool, {3}};
  EXPECT_NE(
      emit_integer_elementwise({"Cast", {i64}, f32}).source.find("dlc_from_float<R>(float((long long)a))"),
      std::string::npos);
  EXPECT_NE(emit_integer_elementwise({"Cast", {f32}, i32})
                .source.find("R(dlc_float_to_int64(double(dlc_to_float(a))))"),
            std::string::npos);
  EXPECT_NE(emit_integer_elementwise({"Cast", {boolean}, i32}).source.find("R((long long)(a != 0))"),
            std::string::npos);
  EXPECT_NE(emit_integer_elementwise({"Cast", {i32}, boolean}).source.find("R((long long)a != 0)"),
            std::string::npos);
  EXPECT_NE(emit_integer_elementwise({"Cast", {i32}, u8}).name,
            emit_integer_elementwise({"Cast", {i32}, i64}).name);
  // Clip by its present bounds (b the first present one), as min(max(x, lo), hi); i8 is signed char.
  const TensorType i8{DType::I8, {3}}, i8_scalar{DType::I8, {}};
  const KernelSource clip =
      emit_integer_elementwise({"Clip", {i8, i8_scalar, i8_scalar}, i8, false, true, true});
  EXPECT_NE(clip.source.find("out0[i] = c < (a < b ? b : a) ? c : (a < b ? b : a);"), std::string::npos)
      << clip.source;
  EXPECT_NE(clip.source.find("const signed char b = in1[0];"), std::string::npos) << clip.source;
  EXPECT_NE(emit_integer_elementwise({"Clip", {i8, i8_scalar}, i8, false, false, true})
                .source.find("out0[i] = b < a ? b : a;"),
            std::string::npos);
  EXPECT_THROW(emit_integer_elementwise({"Clip", {i8, i8_scalar}, i8, false, true, true}),
               Error);  // 2 bounds
  // What the kernels take, and refusals.
  EXPECT_TRUE(is_integer_comparison("Equal"));
  EXPECT_FALSE(is_integer_comparison("Add"));
  EXPECT_TRUE(takes_integer_kernel("Div", {DType::I32, DType::I32}, DType::I32));
  EXPECT_FALSE(takes_integer_kernel("Add", {DType::F32, DType::F32}, DType::F32));  // expression programs
  EXPECT_FALSE(takes_integer_kernel("Pow", {DType::F32, DType::F32}, DType::F32));
  EXPECT_FALSE(takes_integer_kernel("Pow", {DType::F64, DType::I64}, DType::F64));  // no f64 kernels
  EXPECT_FALSE(takes_integer_kernel("Where", {DType::Bool, DType::F32, DType::F32}, DType::F32));
  EXPECT_FALSE(takes_integer_kernel("Add", {DType::I32, DType::I64}, DType::I32));
  EXPECT_TRUE(takes_integer_kernel("Cast", {DType::I32}, DType::F16));
  EXPECT_TRUE(takes_integer_kernel("Cast", {DType::F32}, DType::I64));
  EXPECT_FALSE(takes_integer_kernel("Cast", {DType::F32}, DType::Bool));  // expression programs
  EXPECT_FALSE(takes_integer_kernel("Cast", {DType::F64}, DType::I64));
  EXPECT_EQ(integer_result_dtype("Where", {DType::Bool, DType::I32, DType::I32}), DType::I32);
  EXPECT_THROW(emit_integer_elementwise({"Add", {f32, f32}, f32}), Error);
  EXPECT_THROW(emit_integer_elementwise({"Add", {i64, {DType::I64, {2}}}, i64}), Error);  // no broadcast
  EXPECT_THROW(emit_integer_elementwise({"Equal", {i64, i64}, i64}), Error);              // not bool
}

// Trilu is a copy read inside the band of the last two axes, zeros outside.
TEST(CudaEmitters, TriluCopy) {
  const KernelSource upper = emit_copy(test::trilu_case(DType::BF16, 1, -1));
  EXPECT_NE(upper.source.find("if (o2 - o1 >= -1) {"), std::string::npos) << upper.source;
  EXPECT_NE(upper.source.find("out0[i] = dlc_from_float<T>(0.0f);"), std::string::npos) << upper.source;
  const KernelSource lower = emit_copy(test::trilu_case(DType::F32, -1, 2));
  EXPECT_NE(lower.source.find("if (o2 - o1 <= 2) {"), std::string::npos) << lower.source;
  EXPECT_NE(upper.name, lower.name);
  CopySpec bad = test::trilu_case(DType::F32, 1, 0);
  bad.mode = "edge";
  EXPECT_THROW(emit_copy(bad), Error);
  bad = test::trilu_case(DType::F32, 2, 0);
  EXPECT_THROW(emit_copy(bad), Error);
}

// CumSum scans each line in order (or from the end), accumulating in double or 64-bit integers.
TEST(CudaEmitters, CumSum) {
  const KernelSource f = emit_cumsum({DType::F32, 4, 100, 3, true, false});
  EXPECT_NE(f.source.find("using Acc = double;"), std::string::npos) << f.source;
  EXPECT_NE(f.source.find("constexpr bool kExclusive = true;"), std::string::npos) << f.source;
  EXPECT_NE(f.source.find("constexpr bool kReverse = false;"), std::string::npos) << f.source;
  const KernelSource i = emit_cumsum({DType::I64, 1, 4096, 1, false, true});
  EXPECT_NE(i.source.find("using Acc = long long;"), std::string::npos) << i.source;
  EXPECT_NE(i.source.find("constexpr bool kReverse = true;"), std::string::npos) << i.source;
  EXPECT_THROW(emit_cumsum({DType::F16, 1, 4, 1, false, false}), Error);  // no CPU kernel either
  Attrs a;
  a.set("axis", int64_t(-2));
  a.set("reverse", int64_t(1));
  const CumSumSpec spec = cumsum_spec(a, {DType::I32, {2, 3, 5}});
  EXPECT_EQ(std::vector<int64_t>({spec.outer, spec.extent, spec.inner}), std::vector<int64_t>({2, 3, 5}));
  EXPECT_TRUE(spec.reverse);
  EXPECT_FALSE(spec.exclusive);
  a.set("axis", int64_t(3));
  EXPECT_THROW(cumsum_spec(a, {DType::I32, {2, 3, 5}}), Error);
}

TEST(CudaMultiTensor, AssignsChunks) {
  std::vector<MultiTensorEntry> entries(3);
  entries[0].n = kMultiTensorChunk;
  entries[1].n = kMultiTensorChunk + 1;
  entries[2].n = 1;
  EXPECT_EQ(assign_chunks(entries), 4);
  EXPECT_EQ(entries[1].first_chunk, 1);
  EXPECT_EQ(entries[2].first_chunk, 3);
  EXPECT_EQ(multi_tensor_grid(0), 1);
}

}  // namespace
}  // namespace dlc::codegen::cuda
