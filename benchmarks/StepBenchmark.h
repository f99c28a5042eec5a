//===- StepBenchmark.h - The training-step benchmark ------------*- C++ -*-===//
//
// A row a model and size: the compiled step against libtorch fp32, and
// under bf16 for the models --bf16 names, with the first losses compared.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_STEPBENCHMARK_H
#define MIXBENCH_STEPBENCHMARK_H

#include "BenchModel.h"
#include "Options.h"
#include "Runner.h"

#include <cmath>
#include <string>
#include <vector>

namespace mixbench {

struct Row {
  ModelConfig c;
  std::string order, error;
  Result compiled, torch, bf16, compiledBf16;
  /// libtorch's fastest settings, fp32 and bf16 (Runner::fastestThreads).
  TorchThreads torchThreads, bf16Threads;
  bool checked = false;
  double relDiff = NAN, other = 0;
};

/// Compiles and measures every model of every size --only selects.
std::vector<Row> benchmarkSteps(const Options &o, Runner &runner);

} // namespace mixbench

#endif // MIXBENCH_STEPBENCHMARK_H
