// The order in which training visits the rows: epoch after epoch over the same data, each
// epoch's order a fresh shuffle (with --shuffle) of the previous one by one seeded RNG, the last
// partial batch dropped. The whole state (RNG, current order, the epoch it belongs to) is plain
// data, so a checkpoint can store it and a resumed run draws exactly the batches the
// uninterrupted run would have.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace dlc::driver {

class BatchSampler {
 public:
  struct State {
    std::string rng;             // std::mt19937_64 in its textual form
    std::vector<int64_t> order;  // the row order of epoch `order_epoch`
    int64_t order_epoch = -1;    // -1: no epoch drawn yet
    bool shuffle = false;        // whether each epoch reshuffles
  };

  BatchSampler(int64_t rows, int64_t batch, bool shuffle, uint64_t seed);

  int64_t batches_per_epoch() const { return rows_ / batch_; }
  /// The row indices of micro-batch `index` (counting over all epochs from 0). Indices must be
  /// drawn in increasing order.
  std::vector<int64_t> draw(int64_t index);

  State state() const;
  /// Restores a state() of a sampler over the same rows; throws dlc::Error if it does not fit.
  void restore(const State& state);

 private:
  int64_t rows_, batch_;
  bool shuffle_;
  std::mt19937_64 rng_;
  std::vector<int64_t> order_;
  int64_t order_epoch_ = -1;
};

}  // namespace dlc::driver
