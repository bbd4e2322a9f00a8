// Offset assignment for memory_plan.h.
#include "codegen/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "runtime/plan/buffer_alignment.h"

namespace dlc::codegen {

namespace {
constexpr int64_t kAlign = plan::kBufferAlignment;
int64_t align_up(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& all) {
  // Alias groups as one buffer over the union of lifetimes; aliases become empty (bytes 0, no
  // steps) and take their root's offset at the end.
  std::vector<BufferLifetime> buffers = all;
  for (BufferLifetime& b : buffers)
    if (b.alias_of >= 0) b = {0, 0, -1, b.alias_of};
  for (const BufferLifetime& b : all) {
    if (b.alias_of < 0 || b.first > b.last) continue;
    BufferLifetime& root = buffers.at(size_t(b.alias_of));
    if (root.first > root.last) {
      root.first = b.first;
      root.last = b.last;
    }
    root.first = std::min(root.first, b.first);
    root.last = std::max(root.last, b.last);
  }
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  int last_step = 0;
  for (const auto& b : buffers) last_step = std::max(last_step, b.last);
  std::vector<int64_t> live(size_t(last_step) + 1, 0);
  for (const auto& b : buffers)
    for (int s = b.first; s <= b.last; ++s) live[s] += b.bytes;
  plan.peak_bytes = live.empty() ? 0 : *std::max_element(live.begin(), live.end());

  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const auto& b = buffers[i];
    if (b.alias_of >= 0) continue;
    int64_t size = align_up(std::max<int64_t>(b.bytes, 1));
    // Intervals taken by placed buffers whose lifetimes overlap this one, sorted by offset.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : placed) {
      const auto& o = buffers[j];
      if (o.last < b.first || b.last < o.first || o.first > o.last || b.first > b.last) continue;
      taken.push_back({plan.offsets[j], plan.offsets[j] + align_up(std::max<int64_t>(o.bytes, 1))});
    }
    std::sort(taken.begin(), taken.end());
    // Best fit: the smallest gap that holds the buffer; else after the last interval.
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const auto& [lo, hi] : taken) {
      if (lo - cursor >= size && lo - cursor < best_gap) {
        best = cursor;
        best_gap = lo - cursor;
      }
      cursor = std::max(cursor, hi);
    }
    if (best < 0) best = cursor;
    plan.offsets[i] = best;
    plan.arena_bytes = std::max(plan.arena_bytes, best + size);
    placed.push_back(i);
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].alias_of >= 0) plan.offsets[i] = plan.offsets[size_t(buffers[i].alias_of)];
  return plan;
}

}  // namespace dlc::codegen
