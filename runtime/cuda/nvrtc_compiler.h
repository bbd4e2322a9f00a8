// Compiling generated CUDA C++ with NVRTC: source text to a cubin for one GPU architecture (and
// optionally its PTX), with the compiler log in the error on failure, and a process-wide cache
// so that identical sources compile once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dlc::cuda {

/// How to compile. The defaults are what dlc's kernels are compiled with.
struct NvrtcOptions {
  std::string arch = "sm_90";      // real architecture of the cubin (sm_XX)
  bool fast_math = false;          // --use_fast_math (approximate division, exp, …)
  bool want_ptx = false;           // also keep the PTX (for JIT on newer GPUs)
  bool line_info = false;          // -lineinfo, for profilers
  std::vector<std::string> extra;  // appended verbatim
};

/// The outcome of one compilation.
struct CompiledProgram {
  std::string name;                        // the source's name in messages ("dlc_softmax_fwd_f16.cu")
  std::string arch;                        // "sm_90"
  std::string cubin;                       // the ELF image (bytes)
  std::string ptx;                         // empty unless NvrtcOptions::want_ptx
  std::string log;                         // NVRTC's log (warnings), often empty
  std::vector<std::string> kernels;        // the kernel names asked for …
  std::vector<std::string> lowered_names;  // … and their symbols in the cubin (same order)

  /// The cubin symbol of `kernel`; throws dlc::Error if it was not asked for at compile time.
  const std::string& lowered_name(std::string_view kernel) const;
};

/// The NVRTC option strings for `options`: -std=c++17, the architecture, the CUDA include
/// directory (NVRTC 13 has no built-in cuda_fp16.h / cuda_bf16.h), math and debug flags.
std::vector<std::string> nvrtc_option_list(const NvrtcOptions& options);

/// The folder that holds cuda_fp16.h: $DLC_CUDA_INCLUDE_DIR, else the CUDA Toolkit include folder
/// dlc was built against.
std::string cuda_include_dir();

/// Compiles `source` now (no cache). `kernels` are the __global__ functions to look up; each must
/// exist. Throws dlc::Error naming `name` and the architecture, with the compile log.
CompiledProgram compile_cuda(std::string_view name, std::string_view source,
                             const std::vector<std::string>& kernels, const NvrtcOptions& options = {});

/// A cache of compiled programs keyed by a hash of the source, kernel names and options.
/// Thread-safe; entries live as long as the cache.
class NvrtcCache {
 public:
  /// The cached program for these arguments, compiling it on first use.
  std::shared_ptr<const CompiledProgram> compile(std::string_view name, std::string_view source,
                                                 const std::vector<std::string>& kernels,
                                                 const NvrtcOptions& options = {});

  /// The cache key: 16 hex digits of FNV-1a over the NVRTC version, option strings, kernel names
  /// and source.
  static std::string key(std::string_view source, const std::vector<std::string>& kernels,
                         const NvrtcOptions& options);

  int64_t hits() const;
  int64_t misses() const;
  size_t size() const;
  void clear();

 private:
  // Everything the key hashes; kept per entry and compared on lookup, so a hash collision
  // compiles instead of returning the wrong program.
  static std::string material(std::string_view source, const std::vector<std::string>& kernels,
                              const NvrtcOptions& options);
  struct Entry {
    std::string material;
    std::shared_ptr<const CompiledProgram> program;
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  int64_t hits_ = 0, misses_ = 0;
};

/// The process-wide cache.
NvrtcCache& nvrtc_cache();

}  // namespace dlc::cuda
