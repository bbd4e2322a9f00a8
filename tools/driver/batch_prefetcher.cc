// The batch-gathering worker thread.
#include "tools/driver/batch_prefetcher.h"

#include <utility>

#include "dlc/error.h"

namespace dlc::driver {

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

BatchPrefetcher::BatchPrefetcher(const Dataset& data) : data_(data), worker_([this] { work(); }) {
  for (const auto& [name, array] : data.arrays)
    row_bytes_ += data.rows ? array.bytes.size() / size_t(data.rows) : 0;
}

void BatchPrefetcher::request(std::vector<int64_t> indices) {
  std::lock_guard lock(mutex_);
  if (busy_) throw Error("internal error: a batch was requested before the previous one was taken");
  busy_ = true;
  if (indices.size() * row_bytes_ <= kInlineBatchBytes) {
    try {
      ready_ = gather_batch(data_, indices);
    } catch (...) {
      error_ = std::current_exception();
    }
    return;
  }
  pending_ = std::move(indices);
  changed_.notify_all();
}

BatchPrefetcher::Batch BatchPrefetcher::take() {
  std::unique_lock lock(mutex_);
  if (!busy_) throw Error("internal error: a batch was taken that was not requested");
  changed_.wait(lock, [&] { return ready_.has_value() || error_; });
  busy_ = false;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  Batch batch = std::move(*ready_);
  ready_.reset();
  return batch;
}

void BatchPrefetcher::work() {
  for (;;) {
    std::vector<int64_t> indices;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || pending_.has_value(); });
      if (stopping_) return;
      indices = std::move(*pending_);
      pending_.reset();
    }
    std::optional<Batch> batch;
    std::exception_ptr error;
    try {
      batch = gather_batch(data_, indices);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      ready_ = std::move(batch);
      error_ = error;
    }
    changed_.notify_all();
  }
}

}  // namespace dlc::driver
