// Philox4x32-10 counter-based random numbers (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", Random123). Header-only and free of host-only code so that CUDA kernels include the
// same functions and draw the same streams: element i of a stream with key `seed` takes lane
// i % 4 of the block for counter i / 4.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define DLC_PHILOX_FN __host__ __device__ inline
#else
#define DLC_PHILOX_FN inline
#endif

namespace dlc::rng {

struct Philox4x32Block {
  uint32_t v[4];
};

/// One Philox4x32 block: 10 rounds over `counter` with the 64-bit key {key0, key1}.
DLC_PHILOX_FN Philox4x32Block philox4x32_10(Philox4x32Block counter, uint32_t key0, uint32_t key1) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t* c = counter.v;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += kW0;
      key1 += kW1;
    }
    const uint64_t p0 = uint64_t(kM0) * c[0];
    const uint64_t p1 = uint64_t(kM1) * c[2];
    const uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    const uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    const uint32_t c1 = c[1], c3 = c[3];
    c[0] = hi1 ^ c1 ^ key0;
    c[1] = lo1;
    c[2] = hi0 ^ c3 ^ key1;
    c[3] = lo0;
  }
  return counter;
}

/// The block of stream `seed` at the 128-bit counter {index, offset} (offset: the high 64 bits,
/// e.g. the training step, so that each offset draws an independent sequence).
DLC_PHILOX_FN Philox4x32Block philox_block(uint64_t seed, uint64_t index, uint64_t offset = 0) {
  return philox4x32_10({{uint32_t(index), uint32_t(index >> 32), uint32_t(offset), uint32_t(offset >> 32)}},
                       uint32_t(seed), uint32_t(seed >> 32));
}

/// A uniform float in [0, 1) from the top 24 bits of one 32-bit draw.
DLC_PHILOX_FN float uniform_from_bits(uint32_t bits) { return float(bits >> 8) * (1.0f / 16777216.0f); }

/// Element i's uniform in [0, 1) of the stream `seed`.
DLC_PHILOX_FN float philox_uniform(uint64_t seed, uint64_t i) {
  return uniform_from_bits(philox_block(seed, i / 4).v[i % 4]);
}

}  // namespace dlc::rng

#undef DLC_PHILOX_FN
