//===- Checkpoint.h - The training state and its checkpoints ----*- C++ -*-===//
//
// What the training loop carries from step to step, and its checkpoint file
// (parameters, AdamW moments, step and sampler state; internal).
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_TRAIN_CHECKPOINT_H
#define MIXRT_LIB_TRAIN_CHECKPOINT_H

#include "mixrt/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mixrt {

/// The state the loop carries and checkpoints.
struct TrainState {
  std::vector<std::vector<float>> params, m, v;
  int64_t step = 0;
  uint64_t sampler = 0;
};

/// Writes \p state to \p path, atomically and with a checksum.
void saveCheckpoint(const std::string &path, const Manifest &manifest,
                    const TrainState &state);

/// Reads the checkpoint at \p path, every tensor checked against
/// \p manifest and finite; fails on anything else.
TrainState loadCheckpoint(const std::string &path, const Manifest &manifest);

} // namespace mixrt

#endif // MIXRT_LIB_TRAIN_CHECKPOINT_H
