//===- Batches.cpp - Drawing training batches -----------------------------===//
//
// The tokens and targets of the sequences at given offsets of a corpus, for
// the training loop and evaluation alike.
//
//===----------------------------------------------------------------------===//

#include "Batches.h"

using namespace mixrt;

void mixrt::fillBatch(const Corpus &corpus,
                      const std::vector<uint64_t> &offsets, int64_t seq,
                      std::vector<int32_t> &tokens,
                      std::vector<int32_t> &targets) {
  tokens.clear();
  targets.clear();
  // A mapped binary's ids are checked as they are read: the model would
  // index its embedding with them.
  for (uint64_t off : offsets)
    for (int64_t s = 0; s < seq; ++s) {
      tokens.push_back(int32_t(corpus.checkToken(off + s)));
      targets.push_back(int32_t(corpus.checkToken(off + s + 1)));
    }
}
