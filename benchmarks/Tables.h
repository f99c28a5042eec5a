//===- Tables.h - mix-bench's tables ----------------------------*- C++ -*-===//
//
// The markdown of a run: how and where it was measured, the training-step
// table, horizontal scaling over dense, and the mixture layer alone.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_TABLES_H
#define MIXBENCH_TABLES_H

#include "LayerBenchmark.h"
#include "Options.h"
#include "StepBenchmark.h"

#include <string>
#include <vector>

namespace mixbench {

/// How and when the run was measured, for the tables' preamble.
struct RunInfo {
  std::string date, command, loadStart;
  /// The measured FMA peak on 1 and 2 threads, and the nominal one.
  double peak1 = 0, peak2 = 0, nominalPeak = 0;
};

/// The tables of a run, in markdown.
std::string formatTables(const Options &o, const RunInfo &info,
                         const std::vector<Row> &rows,
                         const LayerResults &layer);

} // namespace mixbench

#endif // MIXBENCH_TABLES_H
