// Widening f16/bf16 operands to f32 around an f32 kernel.
#include "runtime/cpu/widen.h"

#include <memory>
#include <vector>

#include "dlc/half.h"
#include "runtime/cpu/parallel.h"

namespace dlc::cpu {

namespace {

template <typename H>
void widen(const H* in, float* out, int64_t n) {
  parallel_chunks(n, 1 << 15, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = float(in[i]);
  });
}

template <typename H>
void narrow(const float* in, H* out, int64_t n) {
  parallel_chunks(n, 1 << 15, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = H(in[i]);
  });
}

// An f32 buffer that keeps its memory between calls and does not initialize it.
struct Scratch {
  std::unique_ptr<float[]> data;
  size_t capacity = 0;
  float* get(size_t n) {
    if (n > capacity) {
      data.reset(new float[n]);
      capacity = n;
    }
    return data.get();
  }
};

// The widened operands' buffers, one per operand slot, kept per thread from call to call: a fresh
// allocation per call put every large operand on newly mapped pages (glibc maps blocks over
// 128 KiB afresh) and paid a page fault per 4 KiB on each call. What the largest half-precision
// kernel widens stays allocated (it is not in the plan's arena_bytes, nor was it before).
std::vector<Scratch>& scratch(size_t slots) {
  thread_local std::vector<Scratch> buffers;
  if (buffers.size() < slots) buffers.resize(slots);
  return buffers;
}

// `view` retyped as an f32 view of `storage`.
TensorView f32_view(const TensorView& view, Scratch& storage) {
  TensorView w = view;
  w.dtype = DType::F32;
  w.data = storage.get(size_t(view.numel()));
  return w;
}

}  // namespace

bool run_widened(const KernelContext& ctx, KernelFn f32_kernel) {
  bool any = false;
  for (const TensorView& v : ctx.inputs) any = any || (v.data && is_half(v.dtype));
  for (const TensorView& v : ctx.outputs) any = any || (v.data && is_half(v.dtype));
  if (!any) return false;
  KernelContext wide{ctx.attrs, ctx.inputs, ctx.outputs, ctx.state, ctx.step_name, ctx.kernel_name};
  std::vector<Scratch>& storage = scratch(ctx.inputs.size() + ctx.outputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const TensorView& v = ctx.inputs[i];
    if (!v.data || !is_half(v.dtype)) continue;
    wide.inputs[i] = f32_view(v, storage[i]);
    float* out = wide.inputs[i].as<float>();
    if (v.dtype == DType::F16)
      widen(v.as<Half>(), out, v.numel());
    else
      widen(v.as<BFloat16>(), out, v.numel());
  }
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    const TensorView& v = ctx.outputs[i];
    if (v.data && is_half(v.dtype)) wide.outputs[i] = f32_view(v, storage[ctx.inputs.size() + i]);
  }
  f32_kernel(wide);
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    const TensorView& v = ctx.outputs[i];
    if (!v.data || !is_half(v.dtype)) continue;
    const float* in = wide.outputs[i].as<float>();
    if (v.dtype == DType::F16)
      narrow(in, v.as<Half>(), v.numel());
    else
      narrow(in, v.as<BFloat16>(), v.numel());
  }
  return true;
}

}  // namespace dlc::cpu
