// Runs emitted CUDA kernel sources on the host, so that their logic is tested where no GPU is:
// every CUDA thread of a block is a std::thread, __syncthreads and __syncwarp are barriers,
// shuffles exchange through per-warp slots, and a WMMA fragment is its whole 16x16 matrix in every
// lane (lane 0 stores it), with the element order of the CUDA documentation; atomicAdd takes a
// lock. Blocks run one at a
// time on a shared-memory buffer filled with 0xff (NaN) bytes; bytes past the launch's dynamic
// shared memory must stay so. Covers what the attention and copy kernels use (codegen/cuda/
// attention_emitter.h, copy_emitter.h); not timing, not memory ordering beyond the barriers, not the real
// fragment layouts.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#undef __launch_bounds__
#define __launch_bounds__(x)
#undef __global__
#define __global__
#undef __shared__
#define __shared__

inline thread_local uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;

namespace dlc::emulation {

struct Block {
  std::unique_ptr<std::barrier<>> all;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<float> slots;  // one per thread, for shuffles
};
inline Block block;

/// Bytes of each emulated kernel source's shared-memory buffer.
constexpr size_t kSharedBytes = 232448;  // the H100/H200 per-block maximum (227 KiB)

/// Runs `kernel` on `grid` blocks of `threads` threads, one block at a time, over `shared` (a
/// buffer of kSharedBytes) of which the launch may use `used` bytes.
inline void launch(unsigned grid, unsigned threads, unsigned char* shared, size_t used,
                   const std::function<void()>& kernel) {
  if (used > kSharedBytes) throw std::runtime_error("a launch wants more shared memory than a block has");
  blockDim = dim3(threads, 1, 1);
  gridDim = dim3(grid, 1, 1);
  for (unsigned b = 0; b < grid; ++b) {
    std::memset(shared, 0xff, kSharedBytes);
    block.all = std::make_unique<std::barrier<>>(threads);
    block.warps.clear();
    for (unsigned w = 0; w < threads / 32; ++w) block.warps.push_back(std::make_unique<std::barrier<>>(32));
    block.slots.assign(threads, 0.0f);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([=, &kernel] {
        threadIdx = make_uint3(t, 0, 0);
        blockIdx = make_uint3(b, 0, 0);
        kernel();
      });
    for (std::thread& t : pool) t.join();
    for (size_t i = used; i < kSharedBytes; ++i)
      if (shared[i] != 0xff)
        throw std::runtime_error("shared memory written at byte " + std::to_string(i) + ", past the " +
                                 std::to_string(used) + " the launch has");
  }
}

inline float to_float(float x) { return x; }
inline float to_float(__half x) { return __half2float(x); }
inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

}  // namespace dlc::emulation

inline void __syncthreads() { dlc::emulation::block.all->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) {
  dlc::emulation::block.warps[threadIdx.x / 32]->arrive_and_wait();
}
inline float atomicAdd(float* address, float value) {
  static std::mutex m;
  const std::lock_guard<std::mutex> lock(m);
  const float old = *address;
  *address = old + value;
  return old;
}
inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
  auto& b = dlc::emulation::block;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  b.slots[threadIdx.x] = v;
  b.warps[warp]->arrive_and_wait();
  const float other = b.slots[warp * 32 + (lane ^ unsigned(lane_mask))];
  b.warps[warp]->arrive_and_wait();
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
  if (threadIdx.x % 32 != 0) return;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) (layout == mem_row_major ? p[i * ld + j] : p[j * ld + i]) = f.v[i * 16 + j];
}
}  // namespace nvcuda::wmma
