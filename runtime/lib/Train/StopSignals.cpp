//===- StopSignals.cpp - Stopping training on SIGINT and SIGTERM ----------===//
//
// The signal handler notes the first stop signal for the training loop to
// act on after the current step, and says so again or quits on later ones.
//
//===----------------------------------------------------------------------===//

#include "StopSignals.h"

#include <atomic>
#include <cstring>
#include <unistd.h>

using namespace mixrt;

namespace {
/// The first stop signal received (0 if none) and how many arrived.
std::atomic<int> stopSignal{0}, stopCount{0};
/// Whether stderr is a terminal (a progress bar may need ending).
bool stopOnTerminal = false;
static_assert(std::atomic<int>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

void writeToStderr(const char *text) {
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

/// Notes the signal for the loop to act on after the current step. The
/// second signal only says so; the third ends the process at once, by the
/// signal's default action (the last checkpoint is intact: checkpoints
/// replace the file atomically).
extern "C" void onStopSignal(int signo) {
  int expected = 0;
  stopSignal.compare_exchange_strong(expected, signo);
  int count = ++stopCount;
  if (count == 2) {
    if (stopOnTerminal)
      writeToStderr("\n");
    writeToStderr("mix-run: still stopping: finishing the step and "
                  "writing the checkpoint; interrupt once more to quit at "
                  "once, keeping the previous checkpoint\n");
  } else if (count >= 3) {
    ::signal(signo, SIG_DFL);
    ::raise(signo);
  }
}
} // namespace

StopSignals::StopSignals() {
  stopSignal = 0;
  stopCount = 0;
  stopOnTerminal = ::isatty(STDERR_FILENO);
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  // Restart interrupted system calls: the loop's file I/O goes on.
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &previousInt);
  ::sigaction(SIGTERM, &action, &previousTerm);
}

StopSignals::~StopSignals() {
  ::sigaction(SIGINT, &previousInt, nullptr);
  ::sigaction(SIGTERM, &previousTerm, nullptr);
}

int StopSignals::get() { return stopSignal.load(); }

const char *mixrt::getSignalName(int signo) {
  switch (signo) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  }
  return "a signal";
}
