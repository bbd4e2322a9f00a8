// NVRTC compilation and the compiled-program cache (nvrtc_compiler.h).
#include "runtime/cuda/nvrtc_compiler.h"

#include <fmt/format.h>
#include <nvrtc.h>

#include <cstdlib>

#include "dlc/error.h"
#include "dlc/hash.h"
#include "runtime/cuda/check.h"

#ifndef DLC_CUDA_INCLUDE_DIR
#error "DLC_CUDA_INCLUDE_DIR must name the CUDA Toolkit include folder (runtime/cuda/CMakeLists.txt)"
#endif

namespace dlc::cuda {

namespace {

// Owns an nvrtcProgram.
class Program {
 public:
  Program(std::string_view name, std::string_view source) {
    const std::string n(name), s(source);
    DLC_NVRTC_CHECK(nvrtcCreateProgram(&prog_, s.c_str(), n.c_str(), 0, nullptr, nullptr));
  }
  ~Program() { nvrtcDestroyProgram(&prog_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return prog_; }

  std::string log() const {
    size_t size = 0;
    DLC_NVRTC_CHECK(nvrtcGetProgramLogSize(prog_, &size));
    std::string log(size, '\0');
    DLC_NVRTC_CHECK(nvrtcGetProgramLog(prog_, log.data()));
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
  }

 private:
  nvrtcProgram prog_ = nullptr;
};

std::string nvrtc_version() {
  int major = 0, minor = 0;
  DLC_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return fmt::format("{}.{}", major, minor);
}

}  // namespace

const std::string& CompiledProgram::lowered_name(std::string_view kernel) const {
  for (size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i] == kernel) return lowered_names[i];
  throw Error(fmt::format("CUDA program '{}' has no kernel '{}'", name, kernel));
}

std::string cuda_include_dir() {
  if (const char* dir = std::getenv("DLC_CUDA_INCLUDE_DIR"); dir && *dir) return dir;
  return DLC_CUDA_INCLUDE_DIR;
}

std::vector<std::string> nvrtc_option_list(const NvrtcOptions& options) {
  if (options.arch.rfind("sm_", 0) != 0)
    throw Error(fmt::format("NVRTC: architecture '{}' is not a real GPU architecture (sm_XX)", options.arch));
  std::vector<std::string> list = {"-std=c++17", "--gpu-architecture=" + options.arch,
                                   "-I" + cuda_include_dir()};
  if (options.fast_math) list.push_back("--use_fast_math");
  if (options.line_info) list.push_back("-lineinfo");
  list.insert(list.end(), options.extra.begin(), options.extra.end());
  return list;
}

CompiledProgram compile_cuda(std::string_view name, std::string_view source,
                             const std::vector<std::string>& kernels, const NvrtcOptions& options) {
  const std::vector<std::string> option_list = nvrtc_option_list(options);
  std::vector<const char*> argv;
  for (const std::string& o : option_list) argv.push_back(o.c_str());

  Program prog(name, source);
  for (const std::string& k : kernels) DLC_NVRTC_CHECK(nvrtcAddNameExpression(prog.get(), k.c_str()));
  const nvrtcResult result = nvrtcCompileProgram(prog.get(), int(argv.size()), argv.data());
  CompiledProgram out;
  out.name = std::string(name);
  out.arch = options.arch;
  out.log = prog.log();
  if (result != NVRTC_SUCCESS)
    throw Error(fmt::format("NVRTC {} could not compile '{}' for {}: {}\n{}", nvrtc_version(), name,
                            options.arch, describe_status(result), out.log));

  size_t size = 0;
  DLC_NVRTC_CHECK(nvrtcGetCUBINSize(prog.get(), &size));
  out.cubin.resize(size);
  DLC_NVRTC_CHECK(nvrtcGetCUBIN(prog.get(), out.cubin.data()));
  if (out.cubin.empty())
    throw Error(fmt::format("NVRTC produced an empty cubin for '{}' ({})", name, options.arch));
  if (options.want_ptx) {
    DLC_NVRTC_CHECK(nvrtcGetPTXSize(prog.get(), &size));
    out.ptx.resize(size);
    DLC_NVRTC_CHECK(nvrtcGetPTX(prog.get(), out.ptx.data()));
    while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  }
  for (const std::string& k : kernels) {
    const char* lowered = nullptr;
    DLC_NVRTC_CHECK(nvrtcGetLoweredName(prog.get(), k.c_str(), &lowered));
    out.kernels.push_back(k);
    out.lowered_names.emplace_back(lowered);
  }
  return out;
}

std::string NvrtcCache::material(std::string_view source, const std::vector<std::string>& kernels,
                                 const NvrtcOptions& options) {
  std::string m = "nvrtc " + nvrtc_version();
  for (const std::string& o : nvrtc_option_list(options)) m += "\n" + o;
  m += options.want_ptx ? "\nptx" : "\ncubin";
  for (const std::string& k : kernels) m += "\nkernel " + k;
  m += "\n\n";
  m += source;
  return m;
}

std::string NvrtcCache::key(std::string_view source, const std::vector<std::string>& kernels,
                            const NvrtcOptions& options) {
  return hex64(fnv1a64(material(source, kernels, options)));
}

std::shared_ptr<const CompiledProgram> NvrtcCache::compile(std::string_view name, std::string_view source,
                                                           const std::vector<std::string>& kernels,
                                                           const NvrtcOptions& options) {
  std::string m = material(source, kernels, options);
  const std::string k = hex64(fnv1a64(m));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(k);
    if (it != entries_.end() && it->second.material == m) {
      ++hits_;
      return it->second.program;
    }
  }
  // Compiled outside the lock: two threads may compile the same source once each; one result stays.
  auto program = std::make_shared<const CompiledProgram>(compile_cuda(name, source, kernels, options));
  std::lock_guard<std::mutex> lock(mutex_);
  ++misses_;
  Entry& e = entries_[k];
  e.material = std::move(m);
  e.program = program;
  return program;
}

int64_t NvrtcCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

int64_t NvrtcCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

size_t NvrtcCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void NvrtcCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  hits_ = misses_ = 0;
}

NvrtcCache& nvrtc_cache() {
  static NvrtcCache cache;
  return cache;
}

}  // namespace dlc::cuda
