// The CUDA session's parts that need no GPU: the device memory layout and its doesn't-fit error,
// and the resolution of kernel arguments to device addresses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dlc/dtype.h"
#include "dlc/error.h"
#include "runtime/cuda/device_memory.h"
#include "runtime/cuda/kernel_launch.h"

namespace dlc::cuda {
namespace {

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
