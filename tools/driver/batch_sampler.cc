// Batch order over epochs.
#include "tools/driver/batch_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <sstream>

#include "dlc/error.h"

namespace dlc::driver {

BatchSampler::BatchSampler(int64_t rows, int64_t batch, bool shuffle, uint64_t seed)
    : rows_(rows), batch_(batch), shuffle_(shuffle), rng_(seed), order_(size_t(rows)) {
  if (batch <= 0 || rows < batch)
    throw Error(fmt::format("{} rows do not make one batch of {}", rows, batch));
  std::iota(order_.begin(), order_.end(), 0);
}

std::vector<int64_t> BatchSampler::draw(int64_t index) {
  const int64_t epoch = index / batches_per_epoch(), first = index % batches_per_epoch() * batch_;
  if (epoch < order_epoch_) throw Error(fmt::format("batch {} was drawn out of order", index));
  for (; order_epoch_ < epoch; ++order_epoch_)
    if (shuffle_) std::shuffle(order_.begin(), order_.end(), rng_);
  return std::vector<int64_t>(order_.begin() + first, order_.begin() + first + batch_);
}

BatchSampler::State BatchSampler::state() const {
  std::ostringstream rng;
  rng << rng_;
  return {rng.str(), order_, order_epoch_, shuffle_};
}

void BatchSampler::restore(const State& state) {
  std::istringstream rng_text(state.rng);
  std::mt19937_64 rng;
  rng_text >> rng;
  if (!rng_text) throw Error("the shuffle RNG state does not parse");
  if (state.shuffle != shuffle_)
    throw Error(fmt::format("the checkpoint was made {} --shuffle, this run is {} it",
                            state.shuffle ? "with" : "without", shuffle_ ? "with" : "without"));
  if (int64_t(state.order.size()) != rows_)
    throw Error(fmt::format("the row order has {} rows, the data has {}", state.order.size(), rows_));
  std::vector<bool> seen(static_cast<size_t>(rows_));
  for (int64_t r : state.order) {
    if (r < 0 || r >= rows_ || seen[size_t(r)]) throw Error("the row order is not a permutation of the rows");
    seen[size_t(r)] = true;
  }
  if (state.order_epoch < -1) throw Error(fmt::format("invalid epoch {}", state.order_epoch));
  rng_ = rng;
  order_ = state.order;
  order_epoch_ = state.order_epoch;
}

}  // namespace dlc::driver
