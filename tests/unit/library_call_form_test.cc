// The library calls' parameters as the CUDA runtime reads them, without a GPU: the row-major
// MatMul -> column-major cuBLASLt GEMM mapping (checked numerically by a host GEMM that reads
// memory exactly as cuBLASLt is told to), the cuDNN window of a convolution or pooling, and the
// forms of library call the runtime takes (library_call_form.h), which a CUDA compile refuses
// otherwise.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/gemm_problem.h"
#include "codegen/cuda/library_call_form.h"
#include "codegen/cuda/window_geometry.h"
#include "dlc/error.h"

namespace dlc::codegen::cuda {
namespace {

Attrs matmul_params(const Shape& a, const Shape& b, const Shape& out, bool ta = false, bool tb = false) {
  Attrs p;
  p.set("input0_dims", a);
  p.set("input1_dims", b);
  p.set("output0_dims", out);
  p.set("transpose_a", int64_t(ta));
  p.set("transpose_b", int64_t(tb));
  return p;
}

// Column-major element (r, c) of op(m) in batch `batch` of `data`.
float at(const std::vector<float>& data, const GemmMatrix& m, int64_t batch, int64_t r, int64_t c) {
  if (m.transpose) std::swap(r, c);
  return data[size_t(batch * m.batch_stride + c * m.ld + r)];
}

// What cuBLASLt computes for `p`: D = op(first) op(second), column-major, per batch.
std::vector<float> column_major_gemm(const GemmProblem& p, const std::vector<float>& a,
                                     const std::vector<float>& b) {
  std::vector<float> d(size_t(p.m * p.n * p.batch));
  for (int64_t t = 0; t < p.batch; ++t)
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        float acc = 0;
        for (int64_t k = 0; k < p.k; ++k) acc += at(b, p.first, t, i, k) * at(a, p.second, t, k, j);
        d[size_t(t * p.d.batch_stride + j * p.d.ld + i)] = acc;
      }
  return d;
}

// numpy matmul of row-major a and b with optional transposes of their last two dims, where a's or
// b's batch is either the result's or absent.
std::vector<float> row_major_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t batch,
                                    bool a_batched, bool b_batched, int64_t m, int64_t k, int64_t n, bool ta,
                                    bool tb) {
  std::vector<float> out(size_t(batch * m * n));
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0;
        for (int64_t q = 0; q < k; ++q) {
          const float av = a[size_t((a_batched ? t * m * k : 0) + (ta ? q * m + i : i * k + q))];
          const float bv = b[size_t((b_batched ? t * k * n : 0) + (tb ? j * k + q : q * n + j))];
          acc += av * bv;
        }
        out[size_t(t * m * n + i * n + j)] = acc;
      }
  return out;
}

struct GemmCase {
  int64_t batch;
  bool a_batched, b_batched, ta, tb;
};

TEST(GemmProblem, ComputesTheRowMajorProduct) {
  const int64_t m = 3, k = 5, n = 4;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const GemmCase& c : {GemmCase{1, false, false, false, false},
                            {1, false, false, true, false},
                            {1, false, false, false, true},
                            {1, false, false, true, true},
                            {2, true, false, false, false},
                            {2, true, false, true, false},
                            {2, false, true, false, true},
                            {3, true, true, true, true},
                            {3, true, true, false, false}}) {
    const Shape batch_dims = {c.batch};
    Shape a_dims = c.ta ? Shape{k, m} : Shape{m, k}, b_dims = c.tb ? Shape{n, k} : Shape{k, n};
    if (c.a_batched) a_dims.insert(a_dims.begin(), c.batch);
    if (c.b_batched) b_dims.insert(b_dims.begin(), c.batch);
    Shape out = {m, n};
    if (c.batch > 1) out.insert(out.begin(), c.batch);
    std::vector<float> a(size_t(num_elements(a_dims))), b(size_t(num_elements(b_dims)));
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    const GemmProblem p = gemm_problem(matmul_params(a_dims, b_dims, out, c.ta, c.tb), "test");
    const std::vector<float> got = column_major_gemm(p, a, b);
    const std::vector<float> want =
        row_major_matmul(a, b, c.batch, c.a_batched, c.b_batched, m, k, n, c.ta, c.tb);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-5)
          << "batch " << c.batch << " ta " << c.ta << " tb " << c.tb << " at " << i;
  }
}

TEST(GemmProblem, FoldsABatchIntoRowsWhenBHasOne) {
  const GemmProblem p = gemm_problem(matmul_params({4, 8, 16}, {16, 32}, {4, 8, 32}), "test");
  EXPECT_EQ(p.batch, 1);
  EXPECT_EQ(p.m, 32);
  EXPECT_EQ(p.n, 32);  // 4 x 8 rows
  EXPECT_EQ(p.k, 16);
  const GemmProblem t = gemm_problem(matmul_params({4, 16, 8}, {16, 32}, {4, 8, 32}, true), "test");
  EXPECT_EQ(t.batch, 4) << "a transposed A cannot fold";
  EXPECT_EQ(t.first.batch_stride, 0);
}

TEST(GemmProblem, VectorsAndPartialBroadcasts) {
  const GemmProblem v = gemm_problem(matmul_params({3, 5}, {5}, {3}), "test");
  EXPECT_EQ(v.m, 1);
  EXPECT_EQ(v.n, 3);
  try {
    gemm_problem(matmul_params({2, 1, 3, 5}, {1, 2, 5, 4}, {2, 2, 3, 4}), "step 'mm'");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("step 'mm': batch dims [2,1] and [1,2] are neither equal nor one-sided"),
        std::string::npos)
        << e.what();
  }
}

TEST(WindowGeometry, ConvolutionWindowsAsCudnnTakesThem) {
  Attrs conv;
  conv.set("strides", Shape{2, 1});
  conv.set("pads", Shape{1, 2, 1, 2});
  conv.set("dilations", Shape{1, 2});
  conv.set("group", int64_t(4));
  const WindowGeometry g = window_geometry(conv, {8, 16, 9, 10}, {8, 32, 5, 10}, {3, 3}, "conv");
  EXPECT_EQ(g.window, (std::vector<int>{3, 3}));
  EXPECT_EQ(g.pads, (std::vector<int>{1, 2}));
  EXPECT_EQ(g.strides, (std::vector<int>{2, 1}));
  EXPECT_EQ(g.dilations, (std::vector<int>{1, 2}));
  EXPECT_EQ(g.groups, 4);

  // A 1-D window gains a unit dimension; tensors are padded to its rank.
  const WindowGeometry one = window_geometry(Attrs{}, {2, 3, 7}, {2, 4, 5}, {3}, "conv1d");
  EXPECT_EQ(one.window, (std::vector<int>{3, 1}));
  EXPECT_EQ(one.pads, (std::vector<int>{0, 0}));
  EXPECT_EQ(cudnn_dims({2, 3, 7}), (std::vector<int>{2, 3, 7, 1}));
  EXPECT_EQ(cudnn_dims({2, 3}, 5), (std::vector<int>{2, 3, 1, 1, 1}));
  // Packed strides of N=2, C=3, H=4, W=5: NCHW, and NHWC (channels innermost, then W, H, N).
  EXPECT_EQ(packed_strides({2, 3, 4, 5}, false), (std::vector<int>{60, 20, 5, 1}));
  EXPECT_EQ(packed_strides({2, 3, 4, 5}, true), (std::vector<int>{60, 1, 15, 3}));
  EXPECT_EQ(packed_strides({2, 3, 7, 1}, true), (std::vector<int>{21, 1, 3, 3}));  // a 1-D NWC tensor
  EXPECT_EQ(packed_strides({6}, true), (std::vector<int>{1}));
}

TEST(WindowGeometry, AsymmetricPaddingExplicitWhereItAddsAResult) {
  Attrs pool;
  pool.set("strides", Shape{2, 2});
  pool.set("pads", Shape{0, 0, 1, 1});  // ceil-mode style: one more at the end
  const WindowGeometry same = window_geometry(pool, {1, 1, 8, 8}, {1, 1, 4, 4}, {2, 2}, "pool");
  EXPECT_FALSE(same.pads_explicitly()) << "the end pad adds no window: cuDNN pads (0)";
  EXPECT_EQ(same.pads, (std::vector<int>{0, 0}));

  // 7 + 1 padded gives 4 windows, cuDNN's symmetric 0 three: the input is padded explicitly.
  const WindowGeometry padded = window_geometry(pool, {1, 1, 7, 7}, {1, 1, 4, 4}, {2, 2}, "pool");
  EXPECT_TRUE(padded.pads_explicitly());
  EXPECT_EQ(padded.explicit_begin, (std::vector<int>{0, 0}));
  EXPECT_EQ(padded.explicit_end, (std::vector<int>{1, 1}));
  EXPECT_EQ(padded.pads, (std::vector<int>{0, 0}));

  // SAME_UPPER on a 1-D stride-2 window: begin 0, end 1, and the unit dim none.
  Attrs same_upper;
  same_upper.set("strides", Shape{2});
  same_upper.set("pads", Shape{0, 1});
  const WindowGeometry one = window_geometry(same_upper, {1, 2, 8}, {1, 2, 4}, {3}, "conv1d");
  EXPECT_EQ(one.explicit_begin, (std::vector<int>{0, 0}));
  EXPECT_EQ(one.explicit_end, (std::vector<int>{1, 0}));

  // ceil_mode: 7 with no padding gives 3 windows of 2 (floor), 4 with the last one past the end.
  Attrs ceil;
  ceil.set("strides", Shape{2, 2});
  ceil.set("ceil_mode", int64_t(1));
  const WindowGeometry c = window_geometry(ceil, {1, 1, 7, 7}, {1, 1, 4, 4}, {2, 2}, "pool");
  EXPECT_EQ(c.explicit_begin, (std::vector<int>{0, 0}));
  EXPECT_EQ(c.explicit_end, (std::vector<int>{1, 1}));
  EXPECT_FALSE(window_geometry(ceil, {1, 1, 8, 8}, {1, 1, 4, 4}, {2, 2}, "pool").pads_explicitly());

  try {
    window_geometry(pool, {1, 1, 7, 7}, {1, 1, 5, 5}, {2, 2}, "step 'pool'");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "step 'pool': spatial dim 0 has 5 results, and its padding (0 and 1) gives 4");
  }
}

// The message of the dlc::Error check_library_call throws, or "" when it accepts the call.
std::string refusal(const std::string& call, const Attrs& params) {
  try {
    check_library_call(call, params, "step 's'");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Attrs window_params(const std::string& dtype, const Shape& in0, const Shape& in1, const Shape& out0) {
  Attrs p;
  p.set("dtype", dtype);
  p.set("input0_dims", in0);
  if (!in1.empty()) p.set("input1_dims", in1);
  p.set("output0_dims", out0);
  return p;
}

TEST(LibraryCallForm, ConvolutionsReadTheirOperandsInTheirRoles) {
  Attrs conv = window_params("f32", {2, 3, 8, 8}, {4, 3, 3, 3}, {2, 4, 6, 6});
  EXPECT_EQ(refusal("cudnn.convolution_forward", conv), "");
  // ConvTranspose(dy, w) -> dx and ConvGradFilter(dy, x) -> dw of that convolution.
  EXPECT_EQ(refusal("cudnn.convolution_backward_data",
                    window_params("bf16", {2, 4, 6, 6}, {4, 3, 3, 3}, {2, 3, 8, 8})),
            "");
  EXPECT_EQ(refusal("cudnn.convolution_backward_filter",
                    window_params("f16", {2, 4, 6, 6}, {2, 3, 8, 8}, {4, 3, 3, 3})),
            "");
  // Channels-last operands are stored (N, spatial…, C).
  Attrs nhwc = window_params("f32", {2, 8, 8, 3}, {4, 3, 3, 3}, {2, 6, 6, 4});
  nhwc.set("channels_last", int64_t(1));
  EXPECT_EQ(refusal("cudnn.convolution_forward", nhwc), "");
  // 7 results need padding on one end only: the runtime pads the input itself.
  conv.set("pads", Shape{0, 0, 1, 1});
  conv.set("output0_dims", Shape{2, 4, 7, 7});
  EXPECT_EQ(refusal("cudnn.convolution_forward", conv), "");
}

TEST(LibraryCallForm, RefusesWhatTheRuntimeDoesNotTake) {
  EXPECT_EQ(refusal("cublasLt.matmul", window_params("f64", {2, 3}, {3, 4}, {2, 4})),
            "step 's': cublasLt.matmul on f64 is not supported (f32, f16, bf16)");
  Attrs gemm = window_params("f32", {2, 3}, {3, 4}, {2, 4});
  EXPECT_EQ(refusal("cublasLt.matmul", gemm), "");
  gemm.set("epilogue", std::string("gelu"));
  EXPECT_EQ(refusal("cublasLt.matmul", gemm), "step 's': unknown GEMM epilogue 'gelu'");

  Attrs pool = window_params("f32", {1, 1, 8, 8}, {}, {1, 1, 4, 4});
  pool.set("kernel_shape", Shape{2, 2});
  pool.set("strides", Shape{2, 2});
  pool.set("mode", std::string("max"));
  EXPECT_EQ(refusal("cudnn.pooling_forward", pool), "");
  Attrs indices = pool;
  indices.set("output1_dims", Shape{1, 1, 4, 4});
  EXPECT_EQ(refusal("cudnn.pooling_forward", indices),
            "step 's': MaxPool's indices are not supported on CUDA");
  // 7 + 1 padded at the end gives 4 windows: a max pools an explicit -inf padding, an average
  // (which would count it, or not) is refused.
  Attrs padded = pool;
  padded.set("input0_dims", Shape{1, 1, 7, 7});
  padded.set("pads", Shape{0, 0, 1, 1});
  EXPECT_EQ(refusal("cudnn.pooling_forward", padded), "");
  padded.set("mode", std::string("average"));
  EXPECT_NE(refusal("cudnn.pooling_forward", padded).find("average pooling whose end padding adds a result"),
            std::string::npos);
  Attrs dilated = pool;
  dilated.set("dilations", Shape{2, 2});
  dilated.set("output0_dims", Shape{1, 1, 3, 3});
  EXPECT_EQ(refusal("cudnn.pooling_forward", dilated), "step 's': dilated pooling is not supported on CUDA");

  Attrs bn = window_params("bf16", {4, 3, 5, 5}, {3}, {4, 3, 5, 5});
  for (int i = 1; i <= 4; ++i) bn.set("input" + std::to_string(i) + "_dtype", std::string("f32"));
  bn.set("output2_dims", Shape{3});
  bn.set("running_var_unbiased", int64_t(1));
  EXPECT_EQ(refusal("cudnn.batch_norm_forward_training", bn), "");
  Attrs biased = bn;  // the runtime rescales cuDNN's unbiased running variance
  biased.set("running_var_unbiased", int64_t(0));
  EXPECT_EQ(refusal("cudnn.batch_norm_forward_training", biased), "");
  EXPECT_EQ(batch_norm_count(biased), 100);
  Attrs single = window_params("f32", {1, 3, 1, 1}, {3}, {1, 3, 1, 1});  // one value per channel
  single.set("output2_dims", Shape{3});
  EXPECT_EQ(
      refusal("cudnn.batch_norm_forward_training", single),
      "step 's': the biased running variance of one value per channel (cuDNN computes the unbiased one)");
  Attrs half_scale = bn;
  half_scale.set("input1_dtype", std::string("bf16"));
  EXPECT_EQ(refusal("cudnn.batch_norm_forward_training", half_scale),
            "step 's': cuDNN needs f32 scale, bias and statistics with 16-bit data");
}

}  // namespace
}  // namespace dlc::codegen::cuda
