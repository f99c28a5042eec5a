//===- BenchInputs.h - The inputs both sides train on -----------*- C++ -*-===//
//
// The parameters and the batch every side of a row starts from, identical
// in every process.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_BENCHINPUTS_H
#define MIXBENCH_BENCHINPUTS_H

#include "mixrt/Manifest.h"

#include <cstdint>
#include <vector>

namespace mixbench {

/// mix-run init's parameters plus N(0, 0.05^2) noise drawn from streams of
/// their own (seed 12345), identical in every process.
std::vector<std::vector<float>> benchParams(const mixrt::Manifest &man);

/// One fixed batch of tokens and targets, B*S ids each.
void benchBatch(const mixrt::Manifest &man, std::vector<int32_t> &tokens,
                std::vector<int32_t> &targets);

} // namespace mixbench

#endif // MIXBENCH_BENCHINPUTS_H
