// The emulated device of the kernel tests (emulated_device.h): kernel sources become shared
// objects built by the host C++ compiler, loaded once per process.
#include "tests/emulation/emulated_device.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "dlc/error.h"
#include "tests/emulation/emulated_source.h"

namespace dlc::cuda {

void DeviceBuffer::upload(const void* host) {
  if (!bytes_.empty()) std::memcpy(bytes_.data(), host, bytes_.size());
}

void DeviceBuffer::download(void* host) const {
  if (!bytes_.empty()) std::memcpy(host, bytes_.data(), bytes_.size());
}

namespace test {
namespace {

// What the generated wrapper's entry point takes: a[k] is the k-th distinct parameter's value.
using EmulatedRun = void (*)(void** a, unsigned grid0);

// The distinct parameter names of `ks`'s entries, in order of first use.
std::vector<std::string> parameters(const codegen::cuda::KernelSource& ks) {
  std::vector<std::string> names;
  for (const codegen::cuda::KernelEntry& e : ks.entries)
    for (const std::string& p : e.params)
      if (std::find(names.begin(), names.end(), p) == names.end()) names.push_back(p);
  return names;
}

// The host C++ of `ks`: its emulated source (emulated_source.h) and an extern "C" entry point.
// Each parameter converts from a[k] (an Arg, emulated_device.h's kernel_args.h) to its type.
std::string host_source(const codegen::cuda::KernelSource& ks) {
  const std::vector<std::string> names = parameters(ks);
  const auto argument = [&](const std::string& param) {
    const size_t k = size_t(std::find(names.begin(), names.end(), param) - names.begin());
    return "::dlc::emulation::ArgValue{a[" + std::to_string(k) + "]}";
  };
  return "// Emulated " + ks.name +
         "\n#include \"tests/emulation/cuda_shim.h\"\nnamespace dlc::emulation {\n" +
         emulation::emulated(ks, "kernel", argument) +
         "}  // namespace dlc::emulation\nextern \"C\" void dlc_emulated_run(void** a, unsigned grid0) {\n"
         "  dlc::emulation::kernel::run_grid(a, grid0);\n}\n";
}

// Output of `command` with its standard error; its exit status in `status`.
std::string run_command(const std::string& command, int& status) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw Error("emulated device: cannot run " + command);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  status = pclose(pipe);
  return output;
}

// The entry point of `source` built as a shared object in the cache folder (one per distinct
// source; a build goes to a temporary name first, as parallel test processes share the folder).
EmulatedRun load(const std::string& source) {
  static std::mutex mutex;
  static std::map<size_t, EmulatedRun> loaded;
  const std::lock_guard<std::mutex> lock(mutex);
  const size_t key = std::hash<std::string>{}(source);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;
  const std::filesystem::path folder = std::filesystem::path(DLC_EMULATION_CACHE) / "objects";
  std::filesystem::create_directories(folder);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016zx", key);
  const std::filesystem::path object = folder / (std::string("k") + hex + ".so");
  if (!std::filesystem::exists(object)) {
    const std::string temp = (folder / (std::string("k") + hex + "." + std::to_string(getpid()))).string();
    std::ofstream(temp + ".cc") << source;
    int status = 0;
    // The flags of the precompiled cuda_shim.h in the cache folder (tests/CMakeLists.txt).
    const std::string output = run_command(
        std::string(DLC_EMULATION_CXX " " DLC_EMULATION_FLAGS " -shared -o ") + temp + ".so " + temp + ".cc",
        status);
    if (status != 0) throw Error("emulated device: the host build of the kernel source failed:\n" + output);
    std::filesystem::rename(temp + ".so", object);
    std::filesystem::remove(temp + ".cc");
  }
  void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw Error(std::string("emulated device: ") + dlerror());
  const auto run = reinterpret_cast<EmulatedRun>(dlsym(handle, "dlc_emulated_run"));
  if (!run) throw Error("emulated device: " + object.string() + " has no dlc_emulated_run");
  return loaded[key] = run;
}

}  // namespace

void run_kernels(const codegen::cuda::KernelSource& ks, const Args& args, int64_t grid0) {
  const EmulatedRun run = load(host_source(ks));
  DeviceBuffer workspace(size_t(std::max<int64_t>(ks.workspace_bytes, 256)));
  std::vector<Arg> values;
  for (const std::string& p : parameters(ks)) {
    if (p == "workspace") {
      values.emplace_back(workspace.get());
    } else if (p.rfind("workspace+", 0) == 0) {
      values.emplace_back(static_cast<void*>(workspace.as<char>() + std::stoll(p.substr(10))));
    } else {
      auto it = args.find(p);
      if (it == args.end()) throw Error("run_kernels: no argument '" + p + "' for " + ks.name);
      values.push_back(it->second);
    }
  }
  std::vector<void*> slots;
  for (Arg& a : values) slots.push_back(&a);
  run(slots.data(), unsigned(grid0));
}

}  // namespace test
}  // namespace dlc::cuda
