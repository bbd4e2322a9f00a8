// The emitted CUDA kernels of op_cases.h, run emulated on the host (cuda_shim.h), against the CPU
// kernels of the same op and attributes, byte for byte: Tile, SliceGrad (unit, strided and
// reversed steps), Split, GatherElements, Gather and GatherGrad on any axis, Trilu, CumSum
// (exclusive, reversed, integers), the integer elementwise ops, and the Slice, Concat, Transpose
// and Pad that share their spec code. The results start as 0xab bytes, so an element the kernels
// leave unwritten fails.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "runtime/cpu/kernel.h"
#include "tests/emulation/op_cases.h"
#include "tests/emulation/op_registry.h"

namespace dlc::emulation {
namespace {

using Bytes = std::vector<uint8_t>;

class EmulatedOp : public testing::TestWithParam<int> {};

TEST_P(EmulatedOp, MatchesTheCpuKernel) {
  const OpCase c = op_cases().at(size_t(GetParam()));
  ASSERT_LE(c.ins.size(), size_t(kOpOutputSlot));
  const size_t element = dtype_size(output_dtype(c));
  std::mt19937 rng(11);
  std::vector<Bytes> ins, got, want;
  void* slots[2 * kOpOutputSlot] = {};
  std::vector<cpu::TensorView> in_views, out_views;
  for (size_t k = 0; k < c.ins.size(); ++k) {
    ins.push_back(input_bytes(c, k, rng));
    slots[k] = ins.back().data();
  }
  got.reserve(c.outs.size());
  want.reserve(c.outs.size());
  for (size_t k = 0; k < c.outs.size(); ++k) {
    const size_t bytes = size_t(num_elements(c.outs[k])) * element;
    got.emplace_back(bytes, 0xab);
    want.emplace_back(bytes, 0xab);
    slots[size_t(kOpOutputSlot) + k] = got.back().data();
    out_views.push_back({output_dtype(c), c.outs[k], want.back().data()});
  }
  for (size_t k = 0; k < c.ins.size(); ++k) in_views.push_back({input_dtype(c, k), c.ins[k], ins[k].data()});
  op_launchers().at(GetParam())(slots);
  cpu::KernelContext ctx{c.attrs, in_views, out_views, nullptr, "reference", c.op};
  cpu::find_kernel(c.op)(ctx);
  for (size_t k = 0; k < c.outs.size(); ++k) EXPECT_EQ(got[k], want[k]) << c.name << " output " << k;
}

INSTANTIATE_TEST_SUITE_P(Cases, EmulatedOp, testing::Range(0, int(op_cases().size())),
                         [](const auto& info) { return op_cases().at(size_t(info.param)).name; });

}  // namespace
}  // namespace dlc::emulation
