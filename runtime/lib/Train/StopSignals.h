//===- StopSignals.h - Stopping training on SIGINT and SIGTERM --*- C++ -*-===//
//
// While the training loop runs, SIGINT and SIGTERM ask it to stop after the
// current step; a third signal ends the process at once (internal).
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_LIB_TRAIN_STOPSIGNALS_H
#define MIXRT_LIB_TRAIN_STOPSIGNALS_H

#include <csignal>

namespace mixrt {

/// Routes SIGINT and SIGTERM to a handler that notes them while an object
/// of this class lives; the previous handlers come back when it goes.
class StopSignals {
public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;

  /// The signal that asked the run to stop, or 0.
  static int get();

private:
  struct sigaction previousInt = {}, previousTerm = {};
};

/// "SIGINT", "SIGTERM" or "a signal".
const char *getSignalName(int signo);

} // namespace mixrt

#endif // MIXRT_LIB_TRAIN_STOPSIGNALS_H
