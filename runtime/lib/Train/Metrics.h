//===- Metrics.h - The metrics file of a resumed run ------------*- C++ -*-===//
//
// What a resumed run keeps of its metrics.jsonl: the whole lines up to its
// checkpoint's step, and the loss curves they hold (internal).
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_TRAIN_METRICS_H
#define MIXRT_LIB_TRAIN_METRICS_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mixrt {

/// What a resumed run keeps of its metrics file.
struct MetricsPrefix {
  /// The bytes kept: whole lines, each a JSON object whose "step" is at
  /// most the checkpoint's, up to the first line that is not.
  uint64_t bytes = 0;
  /// The step of the last line kept (0 if none).
  int64_t lastStep = 0;
  std::vector<std::pair<int64_t, double>> trainCurve, valCurve;
};

/// The lines of \p text up to step \p step. A run killed between writing
/// a step's line and checkpointing it, or while writing a line, leaves
/// lines past its checkpoint, the last perhaps partial: those go.
MetricsPrefix readMetricsPrefix(const std::string &text, int64_t step);

} // namespace mixrt

#endif // MIXRT_LIB_TRAIN_METRICS_H
