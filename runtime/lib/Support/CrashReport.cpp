//===- CrashReport.cpp - Report fatal signals with a backtrace ------------===//
//
// The handler only calls async-signal-safe functions (write, sigaction,
// raise) and glibc's backtrace, which is safe once loaded: it is called
// once at installation so that libgcc is loaded before any fault.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CrashReport.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <execinfo.h>
#include <initializer_list>
#include <unistd.h>

using namespace mixrt;

namespace {
const char *crashTool = "mixrt";

void writeText(const char *text) {
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

const char *getFatalSignalName(int signo) {
  switch (signo) {
  case SIGSEGV:
    return "SIGSEGV (invalid memory access)";
  case SIGBUS:
    return "SIGBUS (bus error)";
  case SIGILL:
    return "SIGILL (illegal instruction)";
  case SIGFPE:
    return "SIGFPE (arithmetic exception)";
  }
  return "a fatal signal";
}

extern "C" void onFatalSignal(int signo) {
  // SA_RESETHAND restored the default action: a fault in here ends the
  // process instead of recursing.
  writeText("\n");
  writeText(crashTool);
  writeText(": crashed: ");
  writeText(getFatalSignalName(signo));
  writeText("; this is a bug, please report it with this backtrace:\n");
  void *frames[64];
  int count = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  ::raise(signo);
}
} // namespace

void mixrt::installCrashReporter(const char *tool) {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  (void)tool;
  return;
#endif
#endif
  crashTool = tool;
  void *warmUp[1];
  (void)::backtrace(warmUp, 1);
  // A stack overflow leaves no stack for the handler: give it its own.
  static char altStack[64 * 1024];
  stack_t ss = {};
  ss.ss_sp = altStack;
  ss.ss_size = sizeof altStack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction action = {};
  action.sa_handler = onFatalSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
  for (int signo : {SIGSEGV, SIGBUS, SIGILL, SIGFPE})
    ::sigaction(signo, &action, nullptr);
}
