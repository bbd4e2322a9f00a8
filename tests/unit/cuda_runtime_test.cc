// The CUDA runtime helpers that need no GPU: the error-check macros' messages, and device
// discovery that reports 0 devices instead of failing where there is no driver.
#include <gtest/gtest.h>

#include <string>

#include "dlc/error.h"
#include "runtime/cuda/check.h"
#include "runtime/cuda/device.h"

namespace dlc::cuda {
namespace {

// The message of the dlc::Error that `f` throws.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

cudaError_t fails_with_invalid_value() { return cudaErrorInvalidValue; }

TEST(CudaCheck, RuntimeErrorNamesStatementErrorFileAndLine) {
  const std::string msg = error_of([] { DLC_CUDA_CHECK(fails_with_invalid_value()); });
  EXPECT_NE(msg.find("CUDA runtime error"), std::string::npos) << msg;
  EXPECT_NE(msg.find("fails_with_invalid_value()"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cudaErrorInvalidValue"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuda_runtime_test.cc:"), std::string::npos) << msg;
  EXPECT_NO_THROW(DLC_CUDA_CHECK(cudaSuccess));
}

TEST(CudaCheck, EvaluatesTheStatementOnce) {
  int calls = 0;
  auto count = [&] {
    ++calls;
    return NVRTC_SUCCESS;
  };
  DLC_NVRTC_CHECK(count());
  EXPECT_EQ(calls, 1);
}

TEST(CudaCheck, OtherLibraries) {
  std::string msg = error_of([] { DLC_NVRTC_CHECK(NVRTC_ERROR_INVALID_INPUT); });
  EXPECT_NE(msg.find("NVRTC error: NVRTC_ERROR_INVALID_INPUT failed with NVRTC_ERROR_INVALID_INPUT"),
            std::string::npos)
      << msg;
  // Without a driver the driver's strings are unavailable; the code is named either way.
  msg = error_of([] { DLC_CU_CHECK(CUDA_ERROR_OUT_OF_MEMORY); });
  EXPECT_NE(msg.find("CUDA driver error: CUDA_ERROR_OUT_OF_MEMORY failed with"), std::string::npos) << msg;
  EXPECT_TRUE(msg.find("CUDA_ERROR_OUT_OF_MEMORY (") != std::string::npos ||
              msg.find("CUresult 2") != std::string::npos)
      << msg;
  msg = error_of([] { DLC_CUBLAS_CHECK(CUBLAS_STATUS_NOT_INITIALIZED); });
  EXPECT_NE(msg.find("cuBLAS error"), std::string::npos) << msg;
  EXPECT_NE(msg.find("with CUBLAS_STATUS_NOT_INITIALIZED"), std::string::npos) << msg;
#if DLC_TEST_CUDNN
  msg = error_of([] { DLC_CUDNN_CHECK(CUDNN_STATUS_BAD_PARAM); });
  EXPECT_NE(msg.find("cuDNN error: CUDNN_STATUS_BAD_PARAM failed with CUDNN_STATUS_BAD_PARAM"),
            std::string::npos)
      << msg;
#endif
}

// No driver or no GPU counts 0 devices without an error (this machine, CI); a driver older than
// the runtime would throw, and fail here, rightly.
TEST(CudaDevice, CountsDevicesAndUploads) {
  int n = -1;
  EXPECT_NO_THROW(n = cuda_device_count());
  EXPECT_GE(n, 0);
  if (n == 0) GTEST_SKIP() << "no CUDA device";
  EXPECT_FALSE(device_description(0).empty());
  DeviceBuffer b = DeviceBuffer::from(std::vector<float>{1, 2, 3});
  EXPECT_EQ(b.bytes(), 12u);
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace dlc::cuda
