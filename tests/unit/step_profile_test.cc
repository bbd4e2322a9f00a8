// The per-kernel step profile (DLC_PROFILE): totals, calls and the order of its table.
#include "runtime/step_profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace dlc {
namespace {

std::string printed(const StepProfile& p) {
  std::FILE* f = std::tmpfile();
  p.print(f);
  std::string text(size_t(std::ftell(f)), '\0');
  std::rewind(f);
  text.resize(std::fread(text.data(), 1, text.size(), f));
  std::fclose(f);
  return text;
}

TEST(StepProfile, SortsKernelsByTotalTime) {
  StepProfile p;
  EXPECT_EQ(printed(p), "");  // no run, no table
  p.add_run();
  p.add_run();
  p.add("Relu", 0.001);
  p.add("Conv", 0.003);
  p.add("Relu", 0.001);
  const std::string text = printed(p);
  EXPECT_NE(text.find("2 runs, 2.500 ms of kernels per run"), std::string::npos) << text;
  const size_t conv = text.find("Conv"), relu = text.find("Relu");
  ASSERT_NE(conv, std::string::npos);
  ASSERT_NE(relu, std::string::npos);
  EXPECT_LT(conv, relu) << text;
  // Relu: 2 ms in 2 calls, 40% of the time, 1000 us per call.
  EXPECT_NE(text.find("2.00   40.0%        2     1000.0"), std::string::npos) << text;
}

}  // namespace
}  // namespace dlc
