// Memory planning: overlapping lifetimes never share bytes; disjoint ones may; aliases share
// their root's bytes.
#include "codegen/memory_plan.h"

#include <gtest/gtest.h>

namespace dlc::codegen {
namespace {

TEST(MemoryPlan, DisjointLifetimesShareSpace) {
  MemoryPlan p = plan_memory({{1000, 0, 1}, {1000, 2, 3}});
  EXPECT_EQ(p.offsets[0], p.offsets[1]);
  EXPECT_EQ(p.arena_bytes, 1024);
  EXPECT_EQ(p.peak_bytes, 1000);
}

TEST(MemoryPlan, OverlappingLifetimesDoNotOverlapInMemory) {
  std::vector<BufferLifetime> bufs = {{100, 0, 2}, {300, 1, 3}, {64, 2, 2}, {500, 3, 4}};
  MemoryPlan p = plan_memory(bufs);
  for (size_t i = 0; i < bufs.size(); ++i)
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      bool live_together = !(bufs[i].last < bufs[j].first || bufs[j].last < bufs[i].first);
      bool disjoint_memory =
          p.offsets[i] + bufs[i].bytes <= p.offsets[j] || p.offsets[j] + bufs[j].bytes <= p.offsets[i];
      if (live_together) {
        EXPECT_TRUE(disjoint_memory) << i << " " << j;
      }
    }
  EXPECT_GE(p.arena_bytes, p.peak_bytes);
}

TEST(MemoryPlan, AliasesShareTheirRootsBytesOverTheUnionOfLifetimes) {
  // 1 aliases 0 and is read until step 3, so 0's bytes stay taken until then: 2 (live at step
  // 3) cannot reuse them; 3 (from step 4) can.
  MemoryPlan p = plan_memory({{1000, 0, 1}, {1000, 2, 3, 0}, {1000, 3, 3}, {1000, 4, 5}});
  EXPECT_EQ(p.offsets[1], p.offsets[0]);
  EXPECT_NE(p.offsets[2], p.offsets[0]);
  EXPECT_EQ(p.offsets[3], p.offsets[0]);
  EXPECT_EQ(p.arena_bytes, 2048);
  EXPECT_EQ(p.peak_bytes, 2000);  // the alias adds no bytes of its own
}

}  // namespace
}  // namespace dlc::codegen
