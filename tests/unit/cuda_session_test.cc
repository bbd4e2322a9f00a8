// The CUDA session's parts that need no GPU: the row-major MatMul -> column-major cuBLASLt GEMM
// mapping (checked numerically by a host GEMM that reads memory exactly as cuBLASLt is told to),
// the device memory layout and its doesn't-fit error, and the resolution of kernel arguments to
// device addresses.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "dlc/error.h"
#include "runtime/cuda/device_memory.h"
#include "runtime/cuda/gemm_problem.h"
#include "runtime/cuda/kernel_launch.h"
#include "runtime/cuda/window_geometry.h"

namespace dlc::cuda {
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

TEST(WindowGeometry, AsymmetricPaddingOnlyWhereItAddsNoResult) {
  Attrs pool;
  pool.set("strides", Shape{2, 2});
  pool.set("pads", Shape{0, 0, 1, 1});  // ceil-mode style: one more at the end
  EXPECT_NO_THROW(window_geometry(pool, {1, 1, 8, 8}, {1, 1, 4, 4}, {2, 2}, "pool"))
      << "the end pad adds no window";
  try {
    window_geometry(pool, {1, 1, 7, 7}, {1, 1, 4, 4}, {2, 2}, "step 'pool'");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "step 'pool': spatial dim 0 has 4 results, and cuDNN's symmetric padding (0 "
                  "on both ends) gives 3"),
              std::string::npos)
        << e.what();
  }
}

// A one-stage CUDA plan: `arena` bytes, an input of 1000 f32, a kernel step with a 4096-byte
// workspace and a multi-tensor step over two tensors, and a GEMM.
plan::Plan small_plan(int64_t arena) {
  plan::Plan p;
  plan::Stage* st = p.add_stages();
  st->set_device("cuda:0");
  st->set_arena_bytes(arena);
  st->set_peak_bytes(arena / 2);
  for (int i = 0; i < 6; ++i) {
    plan::Buffer* b = st->add_buffers();
    b->set_name("b" + std::to_string(i));
    b->set_dtype(int32_t(DType::F32));
    b->add_dims(i == 4 ? 5000 : 1000);
    b->set_offset(i * 32768);
    b->set_init(-1);
  }
  plan::Binding* in = p.add_inputs();
  in->set_name("x");
  in->set_buffer(0);

  plan::CudaKernel* k = p.add_cuda_kernels();
  k->set_name("dlc_test.cu");
  k->set_workspace_bytes(4096);
  plan::CudaKernelEntry* e = k->add_entries();
  e->set_name("dlc_test");
  for (const char* param : {"x", "workspace+256", "y"}) e->add_params(param);
  plan::CudaKernel* opt = p.add_cuda_kernels();
  opt->set_name("dlc_sgd.cu");
  plan::CudaKernelEntry* oe = opt->add_entries();
  oe->set_name("dlc_sgd");
  for (const char* param : {"table", "num_tensors", "num_chunks", "lr", "step"}) oe->add_params(param);

  auto operand = [](plan::CudaOperand* o, plan::CudaOperand::Kind kind, int index) {
    o->set_kind(kind);
    o->set_index(index);
  };
  auto launch = [](plan::CudaStep* c) {
    plan::CudaLaunch* l = c->add_launches();
    for (int d = 0; d < 3; ++d) {
      l->add_grid(d == 0 ? 7 : 1);
      l->add_block(d == 0 ? 256 : 1);
    }
  };
  plan::Step* s = st->add_steps();
  s->set_name("kernel_step");
  s->add_inputs(0);
  s->add_outputs(1);
  plan::CudaStep* c = s->mutable_cuda();
  c->set_kind(plan::CudaStep::KERNEL);
  c->set_kernel(0);
  launch(c);
  plan::CudaArg* x = c->add_args();
  x->set_param("x");
  operand(x->mutable_operand(), plan::CudaOperand::INPUT, 0);
  plan::CudaArg* y = c->add_args();
  y->set_param("y");
  operand(y->mutable_operand(), plan::CudaOperand::OUTPUT, 0);

  plan::Step* u = st->add_steps();
  u->set_name("update");
  for (int i : {5, 2, 1, 4, 3}) u->add_inputs(i);  // lr, then (param, grad) twice
  u->add_outputs(2);
  u->add_outputs(4);
  plan::CudaStep* uc = u->mutable_cuda();
  uc->set_kind(plan::CudaStep::KERNEL);
  uc->set_kernel(1);
  launch(uc);
  plan::CudaArg* lr = uc->add_args();
  lr->set_param("lr");
  operand(lr->mutable_operand(), plan::CudaOperand::INPUT, 0);
  plan::CudaArg* step = uc->add_args();
  step->set_param("step");
  for (int t = 0; t < 2; ++t) {
    plan::CudaTableRow* row = uc->add_table();
    operand(row->add_slots(), plan::CudaOperand::OUTPUT, t);
    operand(row->add_slots(), plan::CudaOperand::INPUT, 2 + 2 * t);
    row->add_slots();
    row->add_slots();
  }

  plan::Step* g = st->add_steps();
  g->set_name("gemm");
  g->mutable_cuda()->set_kind(plan::CudaStep::LIBRARY);
  g->mutable_cuda()->set_call("cublasLt.matmul");
  return p;
}

TEST(DeviceMemory, LayoutHoldsArenaWorkspaceTablesAndStaging) {
  const plan::Plan p = small_plan(1000000);
  const DeviceMemoryLayout m = device_memory_layout(p, p.stages(0), 1 << 20);
  EXPECT_EQ(m.arena_bytes, 1000000);
  EXPECT_EQ(m.peak_bytes, 500000);
  EXPECT_EQ(m.workspace_bytes, 1 << 20) << "the library calls' workspace is the largest";
  EXPECT_EQ(device_memory_layout(p, p.stages(0), 0).workspace_bytes, 4096) << "else the kernel's";
  EXPECT_EQ(m.table_bytes, 256) << "two 48-byte rows, 256-byte aligned";
  EXPECT_EQ(m.staging_bytes, 4096) << "1000 f32, 256-byte aligned";
  EXPECT_EQ(m.workspace_offset % 256, 0);
  EXPECT_GE(m.workspace_offset, m.arena_bytes);
  EXPECT_EQ(m.table_offset, m.workspace_offset + m.workspace_bytes);
  EXPECT_EQ(m.total_bytes, m.staging_offset + m.staging_bytes);
  EXPECT_NE(m.describe().find("arena 1.0 MiB (planned peak 0.5 MiB)"), std::string::npos) << m.describe();
}

TEST(DeviceMemory, DoesNotFitNamesNeedsFreeAndOptions) {
  const plan::Plan p = small_plan(int64_t(8) << 30);
  const DeviceMemoryLayout m = device_memory_layout(p, p.stages(0), int64_t(32) << 20);
  EXPECT_NO_THROW(check_device_fits(m, m.total_bytes, m.total_bytes, "cuda:0"));
  try {
    check_device_fits(m, int64_t(4) << 30, int64_t(80) << 30, "cuda:1");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const char* part :
         {"does not fit on cuda:1", "needs 8224.0 MiB", "4096.0 MiB of 81920.0 MiB are free",
          "--precision bf16 or fp16", "--batch", "--accumulate"})
      EXPECT_NE(msg.find(part), std::string::npos) << part << " in: " << msg;
  }
}

TEST(KernelLaunch, ArgumentsAreArenaAndWorkspaceAddresses) {
  const plan::Plan p = small_plan(1000000);
  auto* arena = reinterpret_cast<uint8_t*>(uintptr_t(1) << 32);
  auto* workspace = arena + 2000000;
  auto* table = reinterpret_cast<uint8_t*>(uintptr_t(3) << 32);
  const DeviceRegions regions{arena, workspace, 4096};
  KernelStep ks = prepare_kernel_step(p, p.stages(0), p.stages(0).steps(0), regions, table);
  ASSERT_EQ(ks.launches.size(), 1u);
  const KernelLaunch& l = ks.launches[0];
  EXPECT_EQ(l.entry, "dlc_test");
  EXPECT_EQ(l.grid[0], 7);
  EXPECT_EQ(l.block[0], 256);
  ASSERT_EQ(l.args.size(), 3u);
  EXPECT_EQ(std::get<void*>(l.args[0]), arena + 0);
  EXPECT_EQ(std::get<void*>(l.args[1]), workspace + 256);
  EXPECT_EQ(std::get<void*>(l.args[2]), arena + 32768);
  EXPECT_TRUE(ks.table_rows.empty());

  const DeviceRegions small{arena, workspace, 1024};
  EXPECT_THROW(prepare_kernel_step(p, p.stages(0), p.stages(0).steps(0), small, table), Error)
      << "a kernel workspace larger than the session's";
}

TEST(KernelLaunch, MultiTensorTableRowsAndScalars) {
  const plan::Plan p = small_plan(1000000);
  auto* arena = reinterpret_cast<uint8_t*>(uintptr_t(1) << 32);
  auto* table = reinterpret_cast<uint8_t*>(uintptr_t(3) << 32);
  KernelStep ks = prepare_kernel_step(p, p.stages(0), p.stages(0).steps(1), {arena, arena, 0}, table);
  ASSERT_EQ(ks.table_rows.size(), 2u);
  EXPECT_EQ(ks.table_rows[0].ptr[0], arena + 2 * 32768) << "tensor 0's result (output 0, buffer 2)";
  EXPECT_EQ(ks.table_rows[0].ptr[1], arena + 1 * 32768) << "its gradient (input 2, buffer 1)";
  EXPECT_EQ(ks.table_rows[0].ptr[2], nullptr);
  EXPECT_EQ(ks.table_rows[0].n, 1000);
  EXPECT_EQ(ks.table_rows[1].ptr[0], arena + 4 * 32768);
  EXPECT_EQ(ks.table_rows[1].n, 5000);
  EXPECT_EQ(ks.table_rows[1].first_chunk, 1);
  const KernelLaunch& l = ks.launches.at(0);
  ASSERT_EQ(l.args.size(), 5u);
  EXPECT_EQ(std::get<void*>(l.args[0]), table);
  EXPECT_EQ(std::get<int>(l.args[1]), 2);
  EXPECT_EQ(std::get<long long>(l.args[2]), 3) << "1 + 2 chunks of 4096 elements";
  EXPECT_EQ(std::get<void*>(l.args[3]), arena + 5 * 32768) << "lr";
  EXPECT_EQ(std::get<void*>(l.args[4]), nullptr) << "SGD reads no step";
}

}  // namespace
}  // namespace dlc::cuda
