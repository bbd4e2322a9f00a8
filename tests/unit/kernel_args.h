// The arguments of a kernel test's launch (cuda_test_util.h): by parameter name, a device pointer
// or an integer passed by value.
#pragma once

#include <map>
#include <string>
#include <variant>

namespace dlc::cuda::test {

using Arg = std::variant<void*, int, long long>;
using Args = std::map<std::string, Arg>;

}  // namespace dlc::cuda::test
