//===- Inputs.h - Checking parameter and batch files ------------*- C++ -*-===//
//
// The input contract of docs/models.md §8: a parameter file holds exactly the
// manifest's parameters as float32 with their shapes, and a batch holds
// `tokens` and `targets`, int32 or int64 of shape (batch, seq), with ids in
// [0, vocab_size). Errors name the file and the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_INPUTS_H
#define MIXRT_INPUTS_H

#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mixrt {

/// The parameters in \p path: a parameter file (the tensors by name), or
/// a training checkpoint (its param.NAME tensors, renamed NAME).
TensorFile readParamsOrCheckpoint(const std::string &path);

/// Checks that \p params (read from \p path) holds every parameter of
/// \p manifest as float32 of its shape, with finite values, and nothing
/// else; returns the tensors in the manifest's order.
std::vector<const Tensor *> checkParams(const Manifest &manifest,
                                        const TensorFile &params,
                                        const std::string &path);

/// Throws an Error naming \p path, the tensor \p name and the first
/// element of \p data that is a NaN or an infinity.
void checkFinite(const float *data, int64_t count, const std::string &path,
                 const std::string &name);

/// A checked batch of token ids, row-major (batch, seq).
struct TokenBatch {
  int64_t batch = 0;
  int64_t seq = 0;
  std::vector<int64_t> tokens;
  std::vector<int64_t> targets;
};

/// Checks that \p file (read from \p path) holds exactly `tokens` and
/// `targets`, int32 or int64 of shape (ranks * batch, seq) of \p manifest
/// (the package's batch on each of \p ranks data-parallel ranks), with
/// every id in [0, vocab_size); returns them widened to int64.
TokenBatch checkBatch(const Manifest &manifest, const TensorFile &file,
                      const std::string &path, int ranks = 1);

} // namespace mixrt

#endif // MIXRT_INPUTS_H
