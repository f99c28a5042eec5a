//===- Evaluate.cpp - Validation loss and averaging over ranks ------------===//
//
// The validation cross-entropy of `mix-run eval` and of the training loop's
// evaluations, and the mean loss and gradients of a data-parallel step.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "Batches.h"

using namespace mixrt;

LossValues mixrt::averageOverRanks(Communicator &comm, const LossValues &mine,
                                   std::vector<std::vector<float>> &grads,
                                   const std::string &when) {
  double scale = 1.0 / comm.getSize();
  std::string what = "the gradients" + when;
  for (std::vector<float> &g : grads) {
    comm.allReduceSum(g.data(), g.size(), what);
    for (float &x : g)
      x = float(x * scale);
  }
  double values[3] = {mine.loss, mine.ce, mine.aux};
  comm.allReduceSum(values, 3, "the loss" + when);
  LossValues mean;
  mean.loss = float(values[0] * scale);
  mean.ce = float(values[1] * scale);
  mean.aux = float(values[2] * scale);
  return mean;
}

double mixrt::evaluate(const CompiledModel &model, const Manifest &manifest,
                       const std::vector<const float *> &params,
                       const Corpus &corpus, int64_t batches,
                       Communicator &comm) {
  // Batch k holds sequences [k * g, (k + 1) * g) of batches * g evenly
  // spaced ones, g = ranks * b; each rank takes its b of them, so any
  // number of ranks evaluates the same sequences as one rank with g.
  int64_t b = manifest.batch, seq = manifest.seq, ranks = comm.getSize();
  int64_t g = ranks * b;
  uint64_t span = corpus.size() - uint64_t(seq) - 1;
  uint64_t sequences = uint64_t(batches * g);
  std::vector<int32_t> tokens, targets;
  double total = 0;
  for (int64_t k = 0; k < batches; ++k) {
    std::vector<uint64_t> offsets;
    for (int64_t i = comm.getRank() * b; i < (comm.getRank() + 1) * b; ++i)
      offsets.push_back(span * uint64_t(k * g + i) / sequences);
    fillBatch(corpus, offsets, seq, tokens, targets);
    total += model.forward(params, tokens.data(), targets.data()).ce;
  }
  comm.allReduceSum(&total, 1, "the validation loss");
  return total / double(batches * ranks);
}
