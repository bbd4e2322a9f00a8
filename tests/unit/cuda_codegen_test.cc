// NVRTC compilation of the generated CUDA kernels for sm_90, without a GPU: every emitter
// variant × f32, f16, bf16 compiles warning-free to a non-empty cubin holding each entry, and the
// compiler's cache, options and errors behave.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>

#include "codegen/cuda/cumsum_emitter.h"
#include "codegen/cuda/integer_elementwise_emitter.h"
#include "dlc/error.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "tests/unit/cuda_kernel_cases.h"

namespace dlc::codegen::cuda {
namespace {

using dlc::cuda::compile_cuda;
using dlc::cuda::NvrtcCache;
using dlc::cuda::NvrtcOptions;

const DType kDtypes[] = {DType::F32, DType::F16, DType::BF16};

class CudaCodegenCompile : public ::testing::TestWithParam<std::tuple<DType, int>> {};

TEST_P(CudaCodegenCompile, CompilesForSm90) {
  const auto [dtype, index] = GetParam();
  const KernelSource ks = test::kernel_cases(dtype).at(size_t(index));
  NvrtcOptions options;
  options.want_ptx = true;
  const auto program = dlc::cuda::nvrtc_cache().compile(ks.name, ks.source, ks.kernel_names(), options);
  EXPECT_EQ(program->log, "") << "NVRTC warnings for " << ks.name;
  ASSERT_GT(program->cubin.size(), 4u);
  EXPECT_EQ(program->cubin.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(program->ptx.find(".target sm_90"), std::string::npos);
  ASSERT_FALSE(ks.entries.empty());
  for (const KernelEntry& e : ks.entries) {
    EXPECT_EQ(program->lowered_name(e.name), e.name) << "entries are extern \"C\"";
    EXPECT_NE(program->cubin.find(e.name), std::string::npos) << e.name << " is not in the cubin";
    EXPECT_NE(program->ptx.find(".entry " + e.name), std::string::npos) << e.name << " is not a PTX entry";
    EXPECT_GE(e.launch.block[0] * e.launch.block[1] * e.launch.block[2], 32);
    EXPECT_LE(e.launch.block[0] * e.launch.block[1] * e.launch.block[2], 1024);
  }
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<DType, int>>& info) {
  const auto [dtype, index] = info.param;
  return std::string(dtype_name(dtype)) + "_" + std::to_string(index) + "_" +
         test::kernel_cases(dtype).at(size_t(index)).kind;
}

INSTANTIATE_TEST_SUITE_P(AllKinds, CudaCodegenCompile,
                         ::testing::Combine(::testing::ValuesIn(kDtypes),
                                            ::testing::Range(0, int(test::kernel_cases(DType::F32).size()))),
                         case_name);

// Copies move bytes of any storage type: integer and bool tensors too; CumSum has f32, i64 and i32
// kernels (no 16-bit ones: nor has the CPU); the integer elementwise ops i32, i64 and u8 ones
// (Pow's float operand may be 16-bit).
TEST(CudaCodegenCompileCopy, IntegerAndBoolTypes) {
  for (const KernelSource& ks :
       {emit_copy(test::concat_case(DType::I64)),
        emit_copy(test::pad_case(DType::I32, "constant")),
        emit_copy(test::slice_case(DType::Bool)),
        emit_copy(test::pad_case(DType::I64, "reflect")),
        emit_copy(test::trilu_case(DType::I64, -1, 0)),
        emit_cumsum({DType::F32, 4, 100, 3, false, false}),
        emit_cumsum({DType::I64, 1, 4096, 1, true, true}),
        emit_cumsum({DType::I32, 7, 9, 1, false, true}),
        emit_integer_elementwise({"Add", {{DType::I64, {}}, {DType::I64, {}}}, {DType::I64, {}}}),
        emit_integer_elementwise({"Sub", {{DType::U8, {3, 4}}, {DType::U8, {4}}}, {DType::U8, {3, 4}}}),
        emit_integer_elementwise({"Max", {{DType::I32, {4, 1}}, {DType::I32, {1, 5}}}, {DType::I32, {4, 5}}}),
        emit_integer_elementwise({"Equal", {{DType::I64, {6, 1}}, {DType::I64, {5}}}, {DType::Bool, {6, 5}}}),
        emit_integer_elementwise({"Div", {{DType::I32, {4, 1}}, {DType::I32, {1, 5}}}, {DType::I32, {4, 5}}}),
        emit_integer_elementwise({"Mod", {{DType::U8, {7}}, {DType::U8, {7}}}, {DType::U8, {7}}}),
        emit_integer_elementwise({"Mod", {{DType::I64, {7}}, {DType::I64, {7}}}, {DType::I64, {7}}, true}),
        emit_integer_elementwise({"Pow", {{DType::I64, {7}}, {DType::I32, {7}}}, {DType::I64, {7}}}),
        emit_integer_elementwise({"Pow", {{DType::I32, {7}}, {DType::F32, {7}}}, {DType::I32, {7}}}),
        emit_integer_elementwise({"Pow", {{DType::BF16, {7}}, {DType::I64, {7}}}, {DType::BF16, {7}}}),
        emit_integer_elementwise({"Cast", {{DType::F16, {7}}}, {DType::I64, {7}}}),
        emit_integer_elementwise({"Max", {{DType::I8, {2, 3}}, {DType::I8, {3}}}, {DType::I8, {2, 3}}}),
        emit_integer_elementwise({"Clip",
                                  {{DType::I8, {7}}, {DType::I8, {}}, {DType::I8, {}}},
                                  {DType::I8, {7}},
                                  false,
                                  true,
                                  true}),
        emit_integer_elementwise(
            {"Clip", {{DType::I32, {7}}, {DType::I32, {}}}, {DType::I32, {7}}, false, false, true}),
        emit_integer_elementwise({"Cast", {{DType::I32, {7}}}, {DType::BF16, {7}}}),
        emit_integer_elementwise({"Cast", {{DType::Bool, {7}}}, {DType::U8, {7}}}),
        emit_integer_elementwise({"Where",
                                  {{DType::Bool, {3, 1}}, {DType::I64, {3, 4}}, {DType::I64, {4}}},
                                  {DType::I64, {3, 4}}})}) {
    const auto program =
        dlc::cuda::nvrtc_cache().compile(ks.name, ks.source, ks.kernel_names(), NvrtcOptions{});
    EXPECT_EQ(program->log, "") << "NVRTC warnings for " << ks.name;
    EXPECT_EQ(program->lowered_name(ks.entries.at(0).name), ks.entries.at(0).name);
  }
}

constexpr const char* kTiny = R"(extern "C" __global__ void dlc_tiny(float* x) { x[threadIdx.x] *= 2.0f; })";

TEST(NvrtcCompiler, CacheCompilesIdenticalSourcesOnce) {
  NvrtcCache cache;
  const auto a = cache.compile("tiny.cu", kTiny, {"dlc_tiny"});
  const auto b = cache.compile("tiny.cu", kTiny, {"dlc_tiny"});
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(cache.misses(), 1);
  EXPECT_EQ(cache.hits(), 1);
  NvrtcOptions fast;
  fast.fast_math = true;
  const auto c = cache.compile("tiny.cu", kTiny, {"dlc_tiny"}, fast);
  EXPECT_NE(a.get(), c.get()) << "other options are another entry";
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_NE(NvrtcCache::key(kTiny, {"dlc_tiny"}, {}), NvrtcCache::key(kTiny, {"dlc_tiny"}, fast));
  EXPECT_EQ(NvrtcCache::key(kTiny, {"dlc_tiny"}, {}).size(), 16u);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

TEST(NvrtcCompiler, DefaultOptions) {
  const std::vector<std::string> opts = dlc::cuda::nvrtc_option_list({});
  auto has = [&](const std::string& o) { return std::find(opts.begin(), opts.end(), o) != opts.end(); };
  EXPECT_TRUE(has("-std=c++17"));
  EXPECT_TRUE(has("--gpu-architecture=sm_90"));
  EXPECT_FALSE(has("--use_fast_math"));
  EXPECT_TRUE(has("-I" + dlc::cuda::cuda_include_dir()));
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dlc::cuda::cuda_include_dir()) / "cuda_fp16.h"));
  NvrtcOptions ptx_arch;
  ptx_arch.arch = "compute_90";
  EXPECT_THROW(dlc::cuda::nvrtc_option_list(ptx_arch), Error);
}

TEST(NvrtcCompiler, ErrorsCarryTheLog) {
  try {
    compile_cuda("broken.cu", "extern \"C\" __global__ void dlc_broken() { undeclared_name = 1; }",
                 {"dlc_broken"});
    FAIL() << "expected dlc::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("broken.cu"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sm_90"), std::string::npos) << msg;
    EXPECT_NE(msg.find("undeclared_name"), std::string::npos) << msg;
  }
  EXPECT_THROW(compile_cuda("tiny.cu", kTiny, {"dlc_missing"}), Error);
  const dlc::cuda::CompiledProgram p = compile_cuda("tiny.cu", kTiny, {"dlc_tiny"});
  EXPECT_TRUE(p.ptx.empty()) << "PTX only when asked for";
  EXPECT_THROW(p.lowered_name("dlc_other"), Error);
}

}  // namespace
}  // namespace dlc::codegen::cuda
