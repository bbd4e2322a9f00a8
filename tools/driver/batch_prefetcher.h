// Data loading beside the compute: one worker thread gathers the rows of the next batch while
// the session runs the current step (double buffering). Requests are served in order, so the
// batches are exactly those of a sequential loop. A batch of at most kInlineBatchBytes is
// gathered at once in the requesting thread instead: handing it to the worker and back costs two
// thread wake-ups, which took a fifth of a small model's step (the mlp parity model's, about
// 100 us), more than copying its rows.
#pragma once

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tools/driver/dataset.h"

namespace dlc::driver {

class BatchPrefetcher {
 public:
  using Batch = std::map<std::string, Tensor>;
  static constexpr size_t kInlineBatchBytes = size_t(64) << 10;

  /// `data` must outlive the prefetcher.
  explicit BatchPrefetcher(const Dataset& data);
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher&) = delete;
  BatchPrefetcher& operator=(const BatchPrefetcher&) = delete;

  /// Starts gathering the rows `indices`; at most one request is outstanding.
  void request(std::vector<int64_t> indices);
  /// Waits for the requested batch and returns it; rethrows what the worker threw.
  Batch take();

 private:
  void work();

  const Dataset& data_;
  size_t row_bytes_ = 0;  // of one row of every array
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<std::vector<int64_t>> pending_;  // requested, not yet picked up by the worker
  bool busy_ = false;                            // a request is being gathered or waits in ready_
  std::optional<Batch> ready_;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace dlc::driver
