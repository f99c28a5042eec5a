//===- LayerBenchmark.h - The mixture-layer benchmark -----------*- C++ -*-===//
//
// The cMoLLM mixture layer alone: compiled (the N-proportional part of
// 1-layer models' steps), libtorch's loop and stacked forms, OpenBLAS.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_LAYERBENCHMARK_H
#define MIXBENCH_LAYERBENCHMARK_H

#include "Options.h"
#include "Runner.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mixbench {

struct LayerRow {
  std::string size, order;
  int64_t n;
  double compiled = NAN, torchFit = NAN, loop = NAN, stacked = NAN, gemm = NAN,
         flops = NAN;
};

/// What the layer benchmark found at every size.
struct LayerResults {
  std::vector<LayerRow> rows;
  /// OpenBLAS sgemm 1024^3 GFLOP/s, and the most other load, by size.
  std::map<std::string, double> sgemm, other;
  /// libtorch's thread setting, by size.
  std::map<std::string, TorchThreads> threads;
  std::vector<std::string> notes;
};

/// Measures the mixture layer at every size and --layer-streams N.
LayerResults benchmarkLayer(const Options &o, Runner &runner);

} // namespace mixbench

#endif // MIXBENCH_LAYERBENCHMARK_H
