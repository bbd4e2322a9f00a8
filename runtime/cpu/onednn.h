// Shared oneDNN plumbing for the CPU kernels: the global engine, a per-thread stream, memory
// descriptors for dlc tensors, the per-step primitive cache, and arguments that go through a
// reorder when the primitive prefers another memory format than the plain user tensor.
#pragma once

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/cpu/kernel.h"

namespace dlc::cpu::onednn {

/// The process-wide CPU engine.
const dnnl::engine& engine();
/// A stream of the calling thread on engine().
dnnl::stream& stream();

dnnl::memory::data_type data_type(DType t);
dnnl::memory::dims to_dims(const Shape& s);
/// Element strides of a row-major tensor of `dims`.
Shape row_major_strides(const Shape& dims);
/// Row-major descriptor of `dims`.
dnnl::memory::desc plain_desc(const Shape& dims, DType t);
/// Descriptor with explicit element strides.
dnnl::memory::desc strided_desc(const Shape& dims, const Shape& strides, DType t);
/// `d`'s dims and type with the memory format left to the primitive (format_tag::any).
dnnl::memory::desc any_format(const dnnl::memory::desc& d);
/// `d`'s dims and type in oneDNN's 16-channel blocked format (nCw16c, nChw16c, nCdhw16c); `d` has
/// 3 to 5 dims.
dnnl::memory::desc channel_blocked16(const dnnl::memory::desc& d);

/// The step's cached state of type S: built by `build()` on first use, kept in ctx.state when the
/// step has a slot, else in `local` for this call only.
template <typename S, typename Build>
S& cached_state(const KernelContext& ctx, std::unique_ptr<KernelState>& local, Build&& build) {
  std::unique_ptr<KernelState>& slot = ctx.state ? *ctx.state : local;
  if (!slot || !dynamic_cast<S*>(slot.get())) slot = std::make_unique<S>(build());
  return static_cast<S&>(*slot);
}

/// One primitive argument bound to a user tensor of descriptor `user`; when the primitive wants
/// `want`, the data goes through a scratch memory and a cached reorder.
class Arg {
 public:
  Arg() = default;
  Arg(const dnnl::memory::desc& user, const dnnl::memory::desc& want);
  /// Binds the user pointer; for inputs, reorders into the scratch memory on `s`.
  dnnl::memory input(void* data, dnnl::stream& s);
  /// Binds the user pointer of an output; call finish_output after the primitive ran.
  dnnl::memory output(void* data);
  void finish_output(dnnl::stream& s);

 private:
  dnnl::memory user_, scratch_;
  dnnl::reorder to_scratch_, from_scratch_;
  bool reordered_ = false;
};

/// A cached primitive with its arguments (by DNNL_ARG_* id).
struct PrimitiveState : KernelState {
  dnnl::primitive prim;
  std::unordered_map<int, Arg> args;
};

/// Runs `st.prim` with the given input and output pointers (null pointers are skipped), reordering
/// where the arguments need it, and waits for completion.
void execute(PrimitiveState& st, const std::vector<std::pair<int, const void*>>& inputs,
             const std::vector<std::pair<int, void*>>& outputs);

/// Error text of a oneDNN exception.
std::string describe(const dnnl::error& e);

}  // namespace dlc::cpu::onednn
