// Expected source of a few representative generated CUDA kernels (tests/golden/cuda/*.cu), so that
// a change to an emitter shows its diff. Needs no CUDA Toolkit. To accept a change, regenerate:
//   DLC_UPDATE_GOLDEN=1 build/tests/dlc_unit_tests --gtest_filter='CudaGolden.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen/cuda/layer_norm_emitter.h"
#include "tests/unit/cuda_kernel_cases.h"
#include "tests/unit/source_dir.h"

namespace dlc::codegen::cuda {
namespace {

void check_golden(const std::string& file, const KernelSource& ks) {
  const std::string path = dlc::test::source_dir() + "/tests/golden/cuda/" + file;
  const char* update = std::getenv("DLC_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << ks.source;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing " << path << " (DLC_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(ks.source, want.str()) << "generated " << ks.name << " differs from " << path
                                   << "; if the change is intended, regenerate with DLC_UPDATE_GOLDEN=1";
}

TEST(CudaGolden, ElementwiseBiasReluF16) {
  check_golden("elementwise_bias_relu_f16.cu", emit_elementwise(test::bias_relu_program(DType::F16)));
}

TEST(CudaGolden, LayerNormForwardBf16) {
  check_golden("layer_norm_fwd_bf16.cu",
               emit_layer_norm_forward({DType::BF16, 256, 768, 1e-5, true, std::nullopt}));
}

TEST(CudaGolden, AdamwUpdateF32) {
  check_golden("adamw_update_f32.cu",
               emit_adam_update({DType::F32, DType::F32, 0.9, 0.999, 1e-8, 0.01, true}));
}

}  // namespace
}  // namespace dlc::codegen::cuda
