// Training checkpoints: everything a run needs to continue bit for bit — every state value of
// the session (parameters, optimizer moments, accumulation buffers, BatchNorm running
// statistics), the optimizer step reached, the batch sampler (shuffle RNG, current order, its
// epoch, whether it shuffles), the learning-rate schedule, and the fingerprint of the plan the
// state belongs to.
//
// Format: a .npz archive (numpy can read it): one array per state value under its own name, the
// row order as "__dlc.order" (int64), and "__dlc.checkpoint" — uint8 bytes of a JSON object
// {"format": "dlc-checkpoint", "version": 1, "step", "micro_step", "epoch", "rng",
//  "order_epoch", "shuffle", "plan_fingerprint", "lr_schedule", "state": [names]}.
// Written atomically (temporary file + rename): a failed run leaves the previous file untouched.
#pragma once

#include <map>
#include <string>

#include "dlc/tensor.h"
#include "tools/driver/batch_sampler.h"

namespace dlc::driver {

struct TrainingCheckpoint {
  std::map<std::string, Tensor> state;
  int64_t step = 0;        // optimizer steps done
  int64_t micro_step = 0;  // micro-batches consumed (step × micro-steps per step)
  int64_t epoch = 0;       // the epoch of the next micro-batch (informational)
  BatchSampler::State sampler;
  std::string plan_fingerprint;
  std::string lr_schedule;  // LrSchedule::describe()
};

void write_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
/// Throws dlc::Error "PATH: …" if the file is missing, not a checkpoint, corrupt or truncated.
TrainingCheckpoint read_checkpoint(const std::string& path);

}  // namespace dlc::driver
