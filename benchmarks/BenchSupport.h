//===- BenchSupport.h - Small helpers of mix-bench --------------*- C++ -*-===//
//
// Timing, medians, resident memory, reading files, number formatting and
// shell quoting, for the driver and the child processes alike.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_BENCHSUPPORT_H
#define MIXBENCH_BENCHSUPPORT_H

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace mixbench {

using Clock = std::chrono::steady_clock;

inline double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v);

/// Resident set size now, in KiB.
long currentRssKiB();

/// The largest resident set size of this process so far, in KiB.
long maxRssKiB();

std::string readFile(const std::filesystem::path &p);

std::string fmt(const char *format, double x);

std::string shellQuote(const std::string &s);

} // namespace mixbench

#endif // MIXBENCH_BENCHSUPPORT_H
