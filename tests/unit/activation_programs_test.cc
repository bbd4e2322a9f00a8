// The activations with attributes and float Mod as expression programs
// (codegen/cuda/activation_programs.h): run by the CPU's FusedElementwise interpreter, each gives
// its own CPU kernel's bits on random values, zeros, infinities and NaN, with default and with
// given attributes. The CUDA kernel runs
// the same program (NVRTC compile: cli_cuda_compile_conformance; on a GPU: CudaKernels).
#include "codegen/cuda/activation_programs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "dlc/error.h"
#include "runtime/cpu/kernel.h"
#include "tests/unit/kernel_test_util.h"

namespace dlc::codegen::cuda {
namespace {

struct Case {
  const char* op;
  Attrs attrs;
};

template <typename V>
Attrs with(const char* name, V v) {
  Attrs a;
  a.set(name, v);
  return a;
}

std::vector<float> values(size_t n) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-6.f, 6.f);
  std::vector<float> v = {0.f, 1.f, -1.f, 3.f, -3.f, INFINITY, -INFINITY, NAN, 1e-7f, -1e-7f};
  while (v.size() < n) v.push_back(u(rng));
  return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b); }

TEST(ActivationPrograms, MatchTheirCpuKernels) {
  const Case cases[] = {
      {"LeakyRelu", {}},
      {"LeakyRelu", with("alpha", 0.3)},
      {"ThresholdedRelu", {}},
      {"ThresholdedRelu", with("alpha", -0.5)},
      {"HardSigmoid", {}},
      {"HardSwish", {}},
      {"Elu", {}},
      {"Elu", with("alpha", 0.7)},
      {"Selu", {}},
      {"Celu", {}},
      {"Celu", with("alpha", 2.0)},
      {"Mish", {}},
      {"PRelu", {}},
      {"Mod", {}},
      {"Mod", with("fmod", int64_t(1))},
  };
  const size_t n = 64;
  std::vector<float> x = values(n), slope(n), divisor(n);
  for (size_t i = 0; i < n; ++i) {
    slope[i] = 0.05f * float(i % 7) - 0.1f;
    divisor[i] = (i % 2 ? 1.f : -1.f) * (0.7f + 0.3f * float(i % 5));  // both signs, no zero
  }
  for (const Case& c : cases) {
    const bool prelu = std::string(c.op) == "PRelu", mod = std::string(c.op) == "Mod";
    ExprProgram p({int64_t(n)});
    std::vector<int> operands = {p.input("x", DType::F32, {int64_t(n)})};
    if (prelu || mod) operands.push_back(p.input("b", DType::F32, {int64_t(n)}));
    p.output("y", activation_expr(p, c.op, c.attrs, operands), DType::F32);
    p.validate();

    std::vector<float> got(n), want(n);
    std::vector<cpu::TensorView> in = {cpu::test::view(x, {int64_t(n)})};
    if (prelu || mod) in.push_back(cpu::test::view(prelu ? slope : divisor, {int64_t(n)}));
    Attrs program;
    program.set("program", p.body());
    cpu::KernelContext fused =
        cpu::test::kernel_context(program, in, {cpu::test::view(got, {int64_t(n)})}, "FusedElementwise");
    cpu::find_kernel("FusedElementwise")(fused);
    cpu::KernelContext kernel =
        cpu::test::kernel_context(c.attrs, in, {cpu::test::view(want, {int64_t(n)})}, c.op);
    cpu::find_kernel(c.op)(kernel);
    for (size_t i = 0; i < n; ++i)
      EXPECT_TRUE(same_bits(got[i], want[i])) << c.op << " x = " << x[i] << ": program " << got[i]
                                              << ", kernel " << want[i] << " (" << p.body() << ")";
  }
}

TEST(ActivationPrograms, KnowTheirOps) {
  EXPECT_TRUE(is_activation_with_attributes("Elu"));
  EXPECT_FALSE(is_activation_with_attributes("Relu"));  // a program op of its own
  ExprProgram p({4});
  const int x = p.input("x", DType::F32, {4});
  EXPECT_THROW(activation_expr(p, "Softmax", {}, {x}), Error);
  EXPECT_THROW(activation_expr(p, "PRelu", {}, {x}), Error);  // needs its slope
}

}  // namespace
}  // namespace dlc::codegen::cuda
