//===- CrashReport.h - Report fatal signals with a backtrace ----*- C++ -*-===//
//
// A runtime tool that crashes (a fault in its own code, a library's or a
// compiled package's) says so on stderr, with the signal and a backtrace,
// before ending by that signal as it would have: a bug report then carries
// where it happened, even from a run nobody watched.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_CRASHREPORT_H
#define MIXRT_CRASHREPORT_H

namespace mixrt {

/// Installs handlers for SIGSEGV, SIGBUS, SIGILL and SIGFPE (on an alternate
/// stack, so that a stack overflow is reported too) that write
/// "TOOL: crashed: SIGNAL ..." and the backtrace to stderr, then re-raise
/// the signal with its default action. \p tool must outlive the process.
/// Does nothing under AddressSanitizer, which reports faults itself.
void installCrashReporter(const char *tool);

} // namespace mixrt

#endif // MIXRT_CRASHREPORT_H
