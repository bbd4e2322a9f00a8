// The emulated device (emulated_device.h): kernel sources become shared objects built by the host
// C++ compiler, loaded once per process.
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

namespace dlc::emulation {

void HostBuffer::upload(const void* host) {
  if (!bytes_.empty()) std::memcpy(bytes_.data(), host, bytes_.size());
}

void HostBuffer::download(void* host) const {
  if (!bytes_.empty()) std::memcpy(host, bytes_.data(), bytes_.size());
}

namespace {

using Entry = void (*)(int entry, const long long* grid, const int* block, int shared_bytes, void** args);

// Names `ks` among the emulated kernels: 16 hex digits of a hash of its source and entries.
std::string tag_of(const codegen::cuda::KernelSource& ks) {
  std::string material = ks.source;
  for (const codegen::cuda::KernelEntry& e : ks.entries)
    material += "\n" + e.name + " " + std::to_string(e.params.size());
  char hex[32];
  std::snprintf(hex, sizeof hex, "k%016zx", std::hash<std::string>{}(material));
  return hex;
}

// The host C++ of `ks` named `tag`: the source in namespace dlc::emulation::TAG
// (emulated_source.h), and an entry point dlc_emulated_TAG launching entry `entry`, each
// parameter converted from its Arg (cuda_shim.h's ArgValue).
std::string host_text(const codegen::cuda::KernelSource& ks, const std::string& tag) {
  std::string s = "// Emulated " + ks.name + "\n" + emulated_source(ks, "dlc::emulation::" + tag) +
                  "extern \"C\" void dlc_emulated_" + tag +
                  "(int entry, const long long* g, const int* b, int shared, void** a) {\n"
                  "  namespace k = ::dlc::emulation::" +
                  tag + ";\n  switch (entry) {\n";
  for (size_t i = 0; i < ks.entries.size(); ++i)
    s += "    case " + std::to_string(i) + ":\n      " +
         launch_statement(
             ks.entries[i], "k::", "dim3(g[0], g[1], g[2])", "dim3(b[0], b[1], b[2])", "shared",
             [](size_t k) { return "::dlc::emulation::ArgValue{a[" + std::to_string(k) + "]}"; }) +
         "\n      break;\n";
  return s + "  }\n}\n";
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

// The cache folder: objects/TAG.so for each kernel built (hard links to the shared object of
// the batch that built it).
std::filesystem::path objects() { return std::filesystem::path(DLC_EMULATION_CACHE) / "objects"; }

std::mutex cache_mutex;               // guards the cache and `loaded`
std::map<std::string, Entry> loaded;  // by tag

// Builds the kernels of `sources` not in the cache yet as one shared object (one compiler run;
// parallel test processes share the folder, so the object gets a temporary name first).
void build(const std::vector<const codegen::cuda::KernelSource*>& sources) {
  std::vector<std::string> tags;
  std::string text = "#include \"tests/emulation/cuda_shim.h\"\n";
  for (const codegen::cuda::KernelSource* ks : sources) {
    const std::string tag = tag_of(*ks);
    if (loaded.count(tag) || std::filesystem::exists(objects() / (tag + ".so")) ||
        std::find(tags.begin(), tags.end(), tag) != tags.end())
      continue;
    tags.push_back(tag);
    text += host_text(*ks, tag);
  }
  if (tags.empty()) return;
  std::filesystem::create_directories(objects());
  const std::string temp = (objects() / (tags[0] + "." + std::to_string(getpid()))).string();
  std::ofstream(temp + ".cc") << text;
  int status = 0;
  // The flags of the precompiled cuda_shim.h in the cache folder (tests/CMakeLists.txt).
  const std::string output = run_command(
      std::string(DLC_EMULATION_CXX " " DLC_EMULATION_FLAGS " -shared -o ") + temp + ".so " + temp + ".cc",
      status);
  if (status != 0) throw Error("emulated device: the host build of the kernel sources failed:\n" + output);
  for (const std::string& tag : tags) {
    std::error_code ignored;  // another process may have linked it first
    std::filesystem::create_hard_link(temp + ".so", objects() / (tag + ".so"), ignored);
  }
  std::filesystem::remove(temp + ".so");
  std::filesystem::remove(temp + ".cc");
}

// The entry point of `ks`, built if the cache lacks it.
Entry load(const codegen::cuda::KernelSource& ks) {
  const std::string tag = tag_of(ks);
  if (auto it = loaded.find(tag); it != loaded.end()) return it->second;
  build({&ks});
  const std::filesystem::path object = objects() / (tag + ".so");
  void* handle = dlopen(object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) throw Error(std::string("emulated device: ") + dlerror());
  void* entry = dlsym(handle, ("dlc_emulated_" + tag).c_str());
  if (!entry) throw Error("emulated device: " + object.string() + " has no dlc_emulated_" + tag);
  return loaded[tag] = reinterpret_cast<Entry>(entry);
}

}  // namespace

void EmulatedKernel::build_all(const std::vector<const codegen::cuda::KernelSource*>& sources) {
  const std::lock_guard<std::mutex> lock(cache_mutex);
  build(sources);
}

EmulatedKernel::EmulatedKernel(const codegen::cuda::KernelSource& source) : entries_(source.entries.size()) {
  const std::lock_guard<std::mutex> lock(cache_mutex);
  run_ = load(source);
}

void EmulatedKernel::launch(size_t entry, const int64_t (&grid)[3], const int (&block)[3], int shared_bytes,
                            std::vector<cuda::test::Arg>& args) const {
  if (entry >= entries_) throw Error("emulated device: no entry " + std::to_string(entry));
  const long long g[3] = {grid[0], grid[1], grid[2]};
  std::vector<void*> slots;
  for (cuda::test::Arg& a : args) slots.push_back(&a);
  run_(int(entry), g, block, shared_bytes, slots.data());
}

}  // namespace dlc::emulation

namespace dlc::cuda::test {

void run_kernels(const codegen::cuda::KernelSource& ks, const Args& args, int64_t grid0) {
  const emulation::EmulatedKernel kernel(ks);
  DeviceBuffer workspace(size_t(std::max<int64_t>(ks.workspace_bytes, 256)));
  for (size_t i = 0; i < ks.entries.size(); ++i) {
    const codegen::cuda::KernelEntry& e = ks.entries[i];
    std::vector<Arg> values = entry_args(e, args, workspace.get());
    int64_t grid[3] = {e.launch.grid[0] ? e.launch.grid[0] : grid0, e.launch.grid[1], e.launch.grid[2]};
    kernel.launch(i, grid, e.launch.block, e.launch.shared_bytes, values);
  }
}

}  // namespace dlc::cuda::test
