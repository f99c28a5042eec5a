//===- BenchInputs.cpp - The inputs both sides train on -------------------===//
//
// mix-run init's parameters with noise of their own, and one fixed batch
// of random tokens and targets.
//
//===----------------------------------------------------------------------===//

#include "BenchInputs.h"

#include "mixrt/Init.h"

#include <cmath>

namespace mixbench {

std::vector<std::vector<float>> benchParams(const mixrt::Manifest &man) {
  std::vector<std::vector<float>> out;
  for (const mixrt::ParamInfo &info : man.params) {
    std::vector<float> values = mixrt::initParam(info, man.seed);
    mixrt::SplitMix64 rng(mixrt::getStreamKey(12345, info.name));
    for (float &x : values) {
      double u1 = rng.nextUniform(), u2 = rng.nextUniform();
      x += float(0.05 * std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
    }
    out.push_back(std::move(values));
  }
  return out;
}

/// One fixed batch of tokens and targets, B*S ids each.
void benchBatch(const mixrt::Manifest &man, std::vector<int32_t> &tokens,
                std::vector<int32_t> &targets) {
  mixrt::SplitMix64 rng(7);
  int64_t n = man.batch * man.seq;
  for (int64_t i = 0; i < n; ++i)
    tokens.push_back(int32_t(rng.next() % uint64_t(man.vocabSize)));
  for (int64_t i = 0; i < n; ++i)
    targets.push_back(int32_t(rng.next() % uint64_t(man.vocabSize)));
}

} // namespace mixbench
