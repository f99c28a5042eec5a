//===- Machine.h - The machine mix-bench measures on ------------*- C++ -*-===//
//
// Its model and measured FMA peak, its load average, and the CPU time other
// processes take while a row is measured.
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_MACHINE_H
#define MIXBENCH_MACHINE_H

#include "BenchSupport.h"

#include <string>

namespace mixbench {

/// Measured fp32 FMA peak of \p threads threads, GFLOP/s.
double measurePeak(int threads);

/// The CPU's model name, family, model, cores and vector width.
std::string cpuModel();

/// The three load averages of /proc/loadavg.
std::string loadAverage();

/// CPU seconds spent by the whole machine (/proc/stat) and by this
/// process's finished children, at one moment.
struct CpuClock {
  double busy = 0, children = 0;
  Clock::time_point wall;

  static CpuClock now();
};

/// Cores kept busy by processes other than our children between a and b.
double otherLoad(const CpuClock &a, const CpuClock &b);

/// Waits (at most \p maxWait seconds) until other processes keep fewer than
/// \p threshold cores busy over 3 seconds; false if they never did.
bool waitForIdle(double threshold, int maxWait);

} // namespace mixbench

#endif // MIXBENCH_MACHINE_H
