// OwnedHandle (runtime/cuda/owned_handle.h): each handle released once, by its last owner; an
// empty handle never. Checked with a fake release function, so it runs without CUDA.
#include "runtime/cuda/owned_handle.h"

#include <gtest/gtest.h>

#include <vector>

namespace dlc::cuda {
namespace {

std::vector<int> released;

int release(int* handle) {
  released.push_back(*handle);
  return 0;
}

using Handle = OwnedHandle<int*, release>;

TEST(OwnedHandle, ReleasesOnceByItsLastOwner) {
  released.clear();
  int a = 1, b = 2;
  {
    Handle first(&a);
    Handle moved(std::move(first));
    EXPECT_FALSE(first);
    EXPECT_EQ(moved.get(), &a);
    Handle other(&b);
    other = std::move(moved);  // `other` now owns a, `moved` b
    EXPECT_EQ(other.get(), &a);
    EXPECT_TRUE(released.empty());
  }
  EXPECT_EQ(released, (std::vector<int>{1, 2}));  // `other` (a), then `moved` (b); `first` is empty
}

TEST(OwnedHandle, CreateCallsWriteThroughOut) {
  released.clear();
  int a = 7;
  {
    Handle empty;
    Handle created;
    *created.out() = &a;  // as cudaStreamCreate(handle.out()) does
    EXPECT_TRUE(created);
  }
  EXPECT_EQ(released, (std::vector<int>{7}));
}

}  // namespace
}  // namespace dlc::cuda
