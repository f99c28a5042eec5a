//===- Batches.h - Drawing training batches (internal) ----------*- C++ -*-===//
//
// The batch sampler whose state a checkpoint carries, and the tokens and
// targets of the sequences at given offsets of a corpus.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_TRAIN_BATCHES_H
#define MIXRT_LIB_TRAIN_BATCHES_H

#include "mixrt/Corpus.h"

#include <cstdint>
#include <vector>

namespace mixrt {

/// splitmix64: the batch sampler's generator; its state is checkpointed.
struct BatchSampler {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

/// Inputs and targets of `batch` sequences starting at `offsets`.
void fillBatch(const Corpus &corpus, const std::vector<uint64_t> &offsets,
               int64_t seq, std::vector<int32_t> &tokens,
               std::vector<int32_t> &targets);

} // namespace mixrt

#endif // MIXRT_LIB_TRAIN_BATCHES_H
