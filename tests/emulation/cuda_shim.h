// Runs emitted CUDA kernel sources on the host, so that their logic is tested where no GPU is:
// the threads of a block are fibers (ucontext) taking turns on the calling thread, each running
// until it waits at a barrier (__syncthreads, __syncwarp, a shuffle's exchange) or returns; a
// returned thread leaves the barriers, as an exited CUDA thread does. Shuffles exchange through
// per-warp slots, and a WMMA fragment is its whole 16x16 matrix in every lane (lane 0 stores it),
// with the element order of the CUDA documentation. Blocks run one at a time on a shared-memory
// buffer filled with 0xff (NaN) bytes; bytes past the launch's dynamic shared memory must stay
// so; static __shared__ arrays are made static (emulated_source.h). The order of turns is fixed,
// so a run (atomicAdd's order of additions included) is deterministic. Covers what the emitted
// kernels use (codegen/cuda/); not timing, not memory ordering beyond the barriers, not the real
// fragment layouts.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <ucontext.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#undef __launch_bounds__
#define __launch_bounds__(x)
#undef __global__
#define __global__
#undef __shared__
#define __shared__

// CUDA's math library declares these at global scope.
using std::isfinite;
using std::isinf;
using std::isnan;

inline uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace dlc::emulation {

/// Bytes of each emulated kernel source's shared-memory buffer.
constexpr size_t kSharedBytes = 232448;  // the H100/H200 per-block maximum (227 KiB)

/// Bytes of each fiber's stack (the attention kernels keep a few 1 KB fragments).
constexpr size_t kFiberStack = 256 * 1024;

/// A barrier of a block or a warp among the fibers: `live` threads take part (those not returned).
struct Barrier {
  unsigned live = 0, arrived = 0;
  unsigned long phase = 0;
  void release_if_complete() {
    if (arrived != 0 && arrived == live) arrived = 0, ++phase;
  }
};

struct Fiber {
  ucontext_t context;
  std::unique_ptr<char[]> stack;  // kFiberStack bytes, kept from launch to launch
  bool done = false;
};

// The block running: its fibers, the scheduler's context, the barriers and the shuffle slots.
struct Block {
  ucontext_t scheduler;
  std::vector<Fiber> fibers;
  unsigned current = 0;
  unsigned long progress = 0;  // arrivals and returns, to tell a deadlock
  const std::function<void()>* kernel = nullptr;
  Barrier all;
  std::vector<Barrier> warps;
  std::vector<float> slots;  // one per thread, for shuffles
  // AddressSanitizer's view of the stack switches (unused without it).
  const void* scheduler_bottom = nullptr;
  size_t scheduler_size = 0;
};
inline Block block;

/// The thread's index in its block, x fastest (warps are 32 consecutive indices).
inline unsigned linear_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

#if defined(__SANITIZE_ADDRESS__)
inline void start_switch(void** fake_stack, const void* bottom, size_t size) {
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
}
inline void finish_switch(void* fake_stack, const void** bottom, size_t* size) {
  __sanitizer_finish_switch_fiber(fake_stack, bottom, size);
}
#else
inline void start_switch(void**, const void*, size_t) {}
inline void finish_switch(void*, const void**, size_t*) {}
#endif

/// Hands the turn back to the scheduler (from a fiber).
inline void yield() {
  void* fake_stack = nullptr;
  start_switch(&fake_stack, block.scheduler_bottom, block.scheduler_size);
  swapcontext(&block.fibers[block.current].context, &block.scheduler);
  finish_switch(fake_stack, nullptr, nullptr);
}

/// Waits at `b` until every live thread of it has arrived.
inline void wait(Barrier& b) {
  const unsigned long phase = b.phase;
  ++b.arrived;
  ++block.progress;
  b.release_if_complete();
  while (b.phase == phase) yield();
}

// A fiber's body: the kernel, then leaving the block's and the warp's barriers.
inline void fiber_main() {
  finish_switch(nullptr, &block.scheduler_bottom, &block.scheduler_size);
  (*block.kernel)();
  const unsigned t = block.current;
  for (Barrier* b : {&block.all, &block.warps[t / 32]}) {
    --b->live;
    b->release_if_complete();
  }
  block.fibers[t].done = true;
  ++block.progress;
  start_switch(nullptr, block.scheduler_bottom, block.scheduler_size);  // this stack is done
}  // returns to uc_link, the scheduler

/// Runs `kernel` on a `grid` of blocks of `threads`, one block at a time, over `shared` (a buffer
/// of kSharedBytes) of which the launch may use `used` bytes.
inline void launch(dim3 grid, dim3 threads, unsigned char* shared, size_t used,
                   const std::function<void()>& kernel) {
  if (used > kSharedBytes) throw std::runtime_error("a launch wants more shared memory than a block has");
  const unsigned count = threads.x * threads.y * threads.z;
  blockDim = threads;
  gridDim = grid;
  block.kernel = &kernel;
  if (block.fibers.size() < count) block.fibers.resize(count);
  for (Fiber& f : block.fibers)
    if (!f.stack) f.stack.reset(new char[kFiberStack]);
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        std::memset(shared, 0xff, kSharedBytes);
        blockIdx = make_uint3(bx, by, bz);
        block.all = Barrier{count};
        block.warps.clear();
        for (unsigned w = 0; w < (count + 31) / 32; ++w)
          block.warps.push_back(Barrier{std::min(32u, count - 32 * w)});
        block.slots.assign(count, 0.0f);
        for (unsigned t = 0; t < count; ++t) {
          Fiber& f = block.fibers[t];
          f.done = false;
          getcontext(&f.context);
          f.context.uc_stack.ss_sp = f.stack.get();
          f.context.uc_stack.ss_size = kFiberStack;
          f.context.uc_link = &block.scheduler;
          makecontext(&f.context, fiber_main, 0);
        }
        // Turns in thread order until every thread has returned; a pass with no arrival and no
        // return while some wait is a deadlock (a barrier some threads never reach).
        for (unsigned remaining = count; remaining > 0;) {
          const unsigned long before = block.progress;
          remaining = 0;
          for (unsigned t = 0; t < count; ++t) {
            Fiber& f = block.fibers[t];
            if (f.done) continue;
            block.current = t;
            threadIdx = make_uint3(t % threads.x, t / threads.x % threads.y, t / (threads.x * threads.y));
            void* fake_stack = nullptr;
            start_switch(&fake_stack, f.stack.get(), kFiberStack);
            swapcontext(&block.scheduler, &f.context);
            finish_switch(fake_stack, nullptr, nullptr);
            remaining += f.done ? 0 : 1;
          }
          if (remaining > 0 && block.progress == before)
            throw std::runtime_error("the block's threads wait at barriers none can pass (a deadlock)");
        }
        for (size_t i = used; i < kSharedBytes; ++i)
          if (shared[i] != 0xff)
            throw std::runtime_error("shared memory written at byte " + std::to_string(i) + ", past the " +
                                     std::to_string(used) + " the launch has");
      }
}

/// A 1-D launch of `grid` blocks of `threads`.
inline void launch(unsigned grid, unsigned threads, unsigned char* shared, size_t used,
                   const std::function<void()>& kernel) {
  launch(dim3(grid, 1, 1), dim3(threads, 1, 1), shared, used, kernel);
}

/// A kernel parameter's value from its Arg (tests/unit/kernel_args.h; emulated_device.h),
/// converted to the parameter's type: a pointer from a pointer, an integer from an integer. (A
/// mismatch aborts: an exception cannot leave a fiber.)
struct ArgValue {
  void* arg;
  [[noreturn]] static void mismatch(const char* what) {
    std::fprintf(stderr, "emulated kernel: %s\n", what);
    std::abort();
  }
  template <typename T>
  operator T() const {
    const auto& a = *static_cast<const std::variant<void*, int, long long>*>(arg);
    if constexpr (std::is_pointer_v<T>) {
      if (const auto* p = std::get_if<void*>(&a)) return static_cast<T>(*p);
      mismatch("an integer argument for a pointer parameter");
    } else {
      if (const auto* i = std::get_if<int>(&a)) return T(*i);
      if (const auto* i = std::get_if<long long>(&a)) return T(*i);
      mismatch("a pointer argument for an integer parameter");
    }
  }
};

inline float to_float(float x) { return x; }
inline float to_float(__half x) { return __half2float(x); }
inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

}  // namespace dlc::emulation

inline void __syncthreads() { dlc::emulation::wait(dlc::emulation::block.all); }
inline void __syncwarp(unsigned = 0xffffffffu) {
  dlc::emulation::wait(dlc::emulation::block.warps[dlc::emulation::linear_thread() / 32]);
}
inline float atomicAdd(float* address, float value) {
  const float old = *address;
  *address = old + value;
  return old;
}
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  auto& b = dlc::emulation::block;
  const unsigned thread = dlc::emulation::linear_thread(), warp = thread / 32, lane = thread % 32;
  b.slots[thread] = v;
  dlc::emulation::wait(b.warps[warp]);
  const float other = b.slots[warp * 32 + (lane ^ unsigned(lane_mask))];
  dlc::emulation::wait(b.warps[warp]);
  return other;
}
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }

namespace nvcuda::wmma {
struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
enum layout_t { mem_row_major, mem_col_major };
// Element (i, j) of the 16x16 operand at v[16 i + j] (a: M x K, b: K x N, accumulator: M x N).
template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  float v[256];
};
template <typename Use, typename T, typename Layout>
void fill_fragment(fragment<Use, 16, 16, 16, T, Layout>& f, float x) {
  for (float& e : f.v) e = x;
}
template <typename T>
void load_matrix_sync(fragment<matrix_a, 16, 16, 16, T, row_major>& f, const T* p, unsigned ld) {
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k) f.v[i * 16 + k] = dlc::emulation::to_float(p[i * ld + k]);
}
template <typename T>
void load_matrix_sync(fragment<matrix_a, 16, 16, 16, T, col_major>& f, const T* p, unsigned ld) {
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k) f.v[i * 16 + k] = dlc::emulation::to_float(p[k * ld + i]);
}
template <typename T>
void load_matrix_sync(fragment<matrix_b, 16, 16, 16, T, row_major>& f, const T* p, unsigned ld) {
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 16; ++j) f.v[k * 16 + j] = dlc::emulation::to_float(p[k * ld + j]);
}
template <typename T>
void load_matrix_sync(fragment<matrix_b, 16, 16, 16, T, col_major>& f, const T* p, unsigned ld) {
  for (int k = 0; k < 16; ++k)
    for (int j = 0; j < 16; ++j) f.v[k * 16 + j] = dlc::emulation::to_float(p[j * ld + k]);
}
template <typename TA, typename LA, typename TB, typename LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float>& d, const fragment<matrix_a, 16, 16, 16, TA, LA>& a,
              const fragment<matrix_b, 16, 16, 16, TB, LB>& b,
              const fragment<accumulator, 16, 16, 16, float>& c) {
  float out[256];
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float s = c.v[i * 16 + j];
      for (int k = 0; k < 16; ++k) s += a.v[i * 16 + k] * b.v[k * 16 + j];
      out[i * 16 + j] = s;
    }
  std::memcpy(d.v, out, sizeof out);
}
inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 16, float>& f, unsigned ld,
                              layout_t layout) {
  if (dlc::emulation::linear_thread() % 32 != 0) return;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) (layout == mem_row_major ? p[i * ld + j] : p[j * ld + i]) = f.v[i * 16 + j];
}
}  // namespace nvcuda::wmma
