// HostKernelStep: the copies a step run on the host by its CPU kernel needs (each distinct buffer
// once, read ones to the host, written ones back), its run on the host copies, and the errors it
// keeps for the session (a host function cannot throw).
#include "runtime/cuda/host_kernel_step.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace dlc::cuda {
namespace {

// A stage with buffers of `dims` (f32 unless `dtypes` says else) packed at 64-byte offsets.
plan::Stage stage_of(const std::vector<Shape>& dims, const std::vector<DType>& dtypes = {}) {
  plan::Stage st;
  int64_t offset = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    plan::Buffer* b = st.add_buffers();
    b->set_name("b" + std::to_string(i));
    b->set_dtype(int32_t(i < dtypes.size() ? dtypes[i] : DType::F32));
    for (int64_t d : dims[i]) b->add_dims(d);
    b->set_offset(offset);
    b->set_init(-1);
    offset += 64;
  }
  return st;
}

plan::Step step_of(const std::string& kernel, std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
  plan::Step s;
  s.set_kernel(kernel);
  s.set_name("my_" + kernel);
  for (int32_t i : inputs) s.add_inputs(i);
  for (int32_t o : outputs) s.add_outputs(o);
  return s;
}

// Runs `step` as the emulated session does: copies to the host, the kernel, copies back.
void run(HostKernelStep& step) {
  for (const ByteCopy& c : step.to_host()) std::memcpy(c.dst, c.src, c.bytes);
  step.run();
  for (const ByteCopy& c : step.to_device()) std::memcpy(c.dst, c.src, c.bytes);
}

TEST(HostKernelStep, CopiesEachBufferOnceAndRunsTheCpuKernel) {
  const plan::Stage st = stage_of({{4}, {4}});
  const plan::Step s = step_of("Add", {0, 0}, {1});    // y = x + x
  EXPECT_EQ(HostKernelStep::host_bytes(st, s), 128u);  // x and y, 64-byte aligned
  std::vector<float> arena(32, -1.0f);
  for (int i = 0; i < 4; ++i) arena[size_t(i)] = float(i + 1);
  std::vector<uint8_t> host(HostKernelStep::host_bytes(st, s));
  auto* device = reinterpret_cast<uint8_t*>(arena.data());
  HostKernelStep step(st, s, device, host.data());
  ASSERT_EQ(step.to_host().size(), 1u);
  EXPECT_EQ(step.to_host()[0].src, device);
  EXPECT_EQ(step.to_host()[0].dst, host.data());
  EXPECT_EQ(step.to_host()[0].bytes, 16u);
  ASSERT_EQ(step.to_device().size(), 1u);
  EXPECT_EQ(step.to_device()[0].src, host.data() + 64);
  EXPECT_EQ(step.to_device()[0].dst, device + 64);
  run(step);
  EXPECT_EQ(step.take_error(), "");
  EXPECT_EQ(std::vector<float>(arena.begin() + 16, arena.begin() + 20), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(arena[20], -1.0f) << "wrote past y";
}

TEST(HostKernelStep, InPlaceStepSharesOneHostCopy) {
  const plan::Stage st = stage_of({{4}});
  const plan::Step s = step_of("Add", {0, 0}, {0});  // x = x + x
  EXPECT_EQ(HostKernelStep::host_bytes(st, s), 64u);
  std::vector<float> arena{1, 2, 3, 4};
  std::vector<uint8_t> host(64);
  HostKernelStep step(st, s, reinterpret_cast<uint8_t*>(arena.data()), host.data());
  EXPECT_EQ(step.to_host().size(), 1u);
  EXPECT_EQ(step.to_device().size(), 1u);
  run(step);
  EXPECT_EQ(arena, (std::vector<float>{2, 4, 6, 8}));
}

TEST(HostKernelStep, KeepsTheFirstErrorOfItsRunsForTheSession) {
  const plan::Stage st = stage_of({{4}, {1}, {1}}, {DType::F32, DType::I64, DType::F32});
  const plan::Step s = step_of("Gather", {0, 1}, {2});
  std::vector<int64_t> arena(24, 0);
  arena[8] = 7;  // the index, out of range for 4 elements
  std::vector<uint8_t> host(HostKernelStep::host_bytes(st, s));
  HostKernelStep step(st, s, reinterpret_cast<uint8_t*>(arena.data()), host.data());
  EXPECT_NO_THROW(run(step));
  EXPECT_NO_THROW(run(step));
  const std::string error = step.take_error();
  EXPECT_NE(error.find("step 'my_Gather' (Gather): index 7 is out of range"), std::string::npos) << error;
  EXPECT_EQ(step.take_error(), "") << "taken once";
}

TEST(HostKernelStep, RefusesAKernelTheCpuBackendLacks) {
  const plan::Stage st = stage_of({{4}});
  const plan::Step s = step_of("NoSuchKernel", {0}, {0});
  std::vector<uint8_t> arena(64), host(64);
  try {
    HostKernelStep step(st, s, arena.data(), host.data());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "step 'my_NoSuchKernel': the CPU backend has no kernel 'NoSuchKernel'");
  }
}

}  // namespace
}  // namespace dlc::cuda
