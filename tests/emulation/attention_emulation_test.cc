// The emitted CUDA attention kernels (codegen/cuda/attention_emitter.h), run emulated on the host
// (cuda_shim.h), against the CPU kernels on the same rounded operands: the forward's o and lse,
// then the backward from the emulated o and lse, within the tolerance of the storage type. This
// checks the kernels' indexing, tiling, masking of partial tiles and use of shared memory where
// no GPU is; CudaKernels.AttentionForwardAndBackward checks them on one.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "dlc/half.h"
#include "runtime/cpu/kernel.h"
#include "tests/emulation/attention_registry.h"
#include "tests/emulation/attention_specs.h"

namespace dlc::emulation {
namespace {

// Values uniform in [lo, hi), rounded to `dtype` (f16 or bf16): the 16-bit bits and their floats.
struct Operand {
  std::vector<uint16_t> bits;
  std::vector<float> values;
};

float to_float(DType t, uint16_t bits) {
  if (t == DType::F16) return Half::to_float(bits);
  BFloat16 b;
  b.bits = bits;
  return float(b);
}

Operand random_operand(DType t, int64_t n, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  Operand o;
  for (int64_t i = 0; i < n; ++i) {
    const float x = u(rng);
    o.bits.push_back(t == DType::F16 ? Half::from_float(x) : BFloat16::from_float(x));
    o.values.push_back(to_float(t, o.bits.back()));
  }
  return o;
}

std::vector<float> values_of(DType t, const std::vector<uint16_t>& bits) {
  std::vector<float> v;
  for (uint16_t b : bits) v.push_back(to_float(t, b));
  return v;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance * std::max(1.0, double(std::fabs(want[i])))) &&
        reported++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: " << got[i] << ", want " << want[i];
}

cpu::TensorView f32_view(std::vector<float>& v, Shape dims) {
  return {DType::F32, std::move(dims), v.data()};
}

class EmulatedAttention : public testing::TestWithParam<int> {};

TEST_P(EmulatedAttention, MatchesTheCpuKernels) {
  const auto& s = kAttentionSpecs[GetParam()];
  const auto launchers = attention_launchers().at(GetParam());
  // [groups, count, width], or seq-major [batch, count, heads, width]; lse [groups, rows] either way.
  const int64_t batch = s.groups / s.heads;
  const auto operand = [&](int64_t count, int64_t width) {
    return s.seq_major ? Shape{batch, count, s.heads, width} : Shape{s.groups, count, width};
  };
  const Shape qs = operand(s.rows, s.depth), ks = operand(s.keys, s.depth),
              vs = operand(s.keys, s.value_depth), os = operand(s.rows, s.value_depth),
              ls = s.seq_major ? Shape{batch, s.heads, s.rows} : Shape{s.groups, s.rows};
  std::mt19937 rng(7);
  Operand q = random_operand(s.dtype, num_elements(qs), rng, -2, 2),
          k = random_operand(s.dtype, num_elements(ks), rng, -2, 2),
          v = random_operand(s.dtype, num_elements(vs), rng, -1, 1),
          dout = random_operand(s.dtype, num_elements(os), rng, -1, 1);
  // Results start as NaN bits, so a kernel that leaves an element unwritten fails.
  std::vector<uint16_t> o(size_t(num_elements(os)), 0xffff), dq(q.bits.size(), 0xffff),
      dk(k.bits.size(), 0xffff), dv(v.bits.size(), 0xffff);
  std::vector<float> lse(size_t(num_elements(ls)), NAN),
      workspace(codegen::cuda::emit_attention_backward(s).workspace_bytes / sizeof(float), NAN);
  void* buffers[] = {q.bits.data(),    k.bits.data(),    v.bits.data(), o.data(),  lse.data(),
                     dout.bits.data(), workspace.data(), dq.data(),     dk.data(), dv.data()};
  launchers.first(buffers);
  launchers.second(buffers);

  Attrs attrs;
  attrs.set("scale", s.scale);
  if (s.causal) attrs.set("causal", int64_t(1));
  if (s.seq_major) attrs.set("seq_major", int64_t(1));
  std::vector<float> o_want(o.size()), lse_want(lse.size());
  cpu::KernelContext forward{attrs,
                             {f32_view(q.values, qs), f32_view(k.values, ks), f32_view(v.values, vs)},
                             {f32_view(o_want, os), f32_view(lse_want, ls)},
                             nullptr,
                             "reference",
                             "Attention"};
  cpu::find_kernel("Attention")(forward);
  std::vector<float> o_got = values_of(s.dtype, o), dq_want(dq.size()), dk_want(dk.size()),
                     dv_want(dv.size());
  cpu::KernelContext backward{attrs,
                              {f32_view(dout.values, os), f32_view(q.values, qs), f32_view(k.values, ks),
                               f32_view(v.values, vs), f32_view(o_got, os), f32_view(lse, ls)},
                              {f32_view(dq_want, qs), f32_view(dk_want, ks), f32_view(dv_want, vs)},
                              nullptr,
                              "reference",
                              "AttentionGrad"};
  cpu::find_kernel("AttentionGrad")(backward);
  const double tolerance = s.dtype == DType::F16 ? 1e-2 : 4e-2;
  expect_close(o_got, o_want, tolerance, "o");
  expect_close(lse, lse_want, 1e-4, "lse");
  expect_close(values_of(s.dtype, dq), dq_want, tolerance, "dq");
  expect_close(values_of(s.dtype, dk), dk_want, tolerance, "dk");
  expect_close(values_of(s.dtype, dv), dv_want, tolerance, "dv");
}

INSTANTIATE_TEST_SUITE_P(Specs, EmulatedAttention, testing::Range(0, int(std::size(kAttentionSpecs))),
                         [](const auto& info) {
                           const auto& s = kAttentionSpecs[info.param];
                           return std::string(dtype_name(s.dtype)) + "_" + std::to_string(s.groups) + "x" +
                                  std::to_string(s.rows) + "x" + std::to_string(s.keys) + "_d" +
                                  std::to_string(s.depth) + "x" + std::to_string(s.value_depth) +
                                  (s.causal ? "_causal" : "") + (s.seq_major ? "_seq_major" : "");
                         });

}  // namespace
}  // namespace dlc::emulation
