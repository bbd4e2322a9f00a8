// The table of a multi-tensor launch: optimizer kernels update many tensors in one launch, each
// block taking fixed-size chunks of some tensor. The host fills one MultiTensorEntry per tensor
// (device pointers and the element count), assign_chunks() numbers the chunks, and the table is
// copied to device memory once (the pointers are arena addresses, fixed for a plan). The device
// code declares the same 48-byte layout (optimizer_emitter.cc).
#pragma once

#include <cstdint>
#include <vector>

namespace dlc::codegen::cuda {

/// Elements of one chunk (one block's work item).
constexpr int64_t kMultiTensorChunk = 4096;

struct MultiTensorEntry {
  void* ptr[4] = {nullptr, nullptr, nullptr, nullptr};  // per optimizer: param, grad, state…
  int64_t n = 0;                                        // elements
  int64_t first_chunk = 0;                              // set by assign_chunks
};
static_assert(sizeof(MultiTensorEntry) == 48, "the device code reads this layout");

/// Sets each entry's first_chunk (entries in order) and returns the total number of chunks.
inline int64_t assign_chunks(std::vector<MultiTensorEntry>& entries) {
  int64_t chunks = 0;
  for (MultiTensorEntry& e : entries) {
    e.first_chunk = chunks;
    chunks += (e.n + kMultiTensorChunk - 1) / kMultiTensorChunk;
  }
  return chunks;
}

}  // namespace dlc::codegen::cuda
