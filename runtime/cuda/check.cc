// Error messages of the CUDA check macros (check.h).
#include "runtime/cuda/check.h"

#include <fmt/format.h>

namespace dlc::cuda {

void throw_cuda_error(const char* library, const char* statement, const std::string& error, const char* file,
                      int line) {
  throw Error(fmt::format("{} error: {} failed with {} at {}:{}", library, statement, error, file, line));
}

std::string describe_status(cudaError_t status) {
  return fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status));
}

std::string describe_status(CUresult status) {
  using ErrorFn = CUresult (*)(CUresult, const char**);
  // Resolved once; stays null where no driver is installed.
  static const auto resolve = [](const char* symbol) -> ErrorFn {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return nullptr;
    return reinterpret_cast<ErrorFn>(fn);
  };
  static const ErrorFn get_name = resolve("cuGetErrorName");
  static const ErrorFn get_string = resolve("cuGetErrorString");
  const char* name = nullptr;
  const char* text = nullptr;
  if (get_name) get_name(status, &name);
  if (get_string) get_string(status, &text);
  if (!name) return fmt::format("CUresult {}", int(status));
  return text ? fmt::format("{} ({})", name, text) : std::string(name);
}

std::string describe_status(nvrtcResult status) {
  return fmt::format("{} ({})", nvrtcGetErrorString(status), int(status));
}

}  // namespace dlc::cuda
