//===- Machine.cpp - The machine mix-bench measures on --------------------===//
//
// The FMA peak measured with AVX2 kernels on threads, /proc/cpuinfo,
// /proc/loadavg, and /proc/stat against the CPU time of the children.
//
//===----------------------------------------------------------------------===//

#include "Machine.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <immintrin.h>
#include <iostream>
#include <sstream>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mixbench;

namespace {
/// FMA throughput: 12 independent chains of 8-wide fp32 FMAs per thread
/// (AVX2; the peak of AVX-512 on Zen is the same per cycle).
__attribute__((target("avx2,fma"))) double fmaKernel(int64_t iters) {
  __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  __m256 a[12];
  for (int j = 0; j < 12; ++j)
    a[j] = _mm256_set1_ps(float(j));
  for (int64_t i = 0; i < iters; ++i)
    for (int j = 0; j < 12; ++j)
      a[j] = _mm256_fmadd_ps(a[j], b, c);
  __m256 s = a[0];
  for (int j = 1; j < 12; ++j)
    s = _mm256_add_ps(s, a[j]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}
} // namespace

double mixbench::measurePeak(int threads) {
  const int64_t iters = 20'000'000; // 3.84 GFLOP a thread
  std::vector<std::thread> pool;
  std::atomic<double> sink{0};
  auto t0 = Clock::now();
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      double r = fmaKernel(iters);
      double cur = sink.load();
      while (!sink.compare_exchange_weak(cur, cur + r)) {
      }
    });
  for (auto &th : pool)
    th.join();
  double dt = seconds(t0, Clock::now());
  return double(threads) * double(iters) * 12 * 8 * 2 / dt / 1e9 +
         (sink.load() == 12345.0 ? 1e-9 : 0.0);
}

std::string mixbench::cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, family, modelNo;
  while (std::getline(in, line)) {
    auto val = [&] { return line.substr(line.find(':') + 2); };
    if (model.empty() && line.rfind("model name", 0) == 0)
      model = val();
    else if (family.empty() && line.rfind("cpu family", 0) == 0)
      family = val();
    else if (modelNo.empty() && line.rfind("model\t", 0) == 0)
      modelNo = val();
  }
  bool avx512 = __builtin_cpu_supports("avx512f");
  return model + " (family " + family + ", model " + modelNo + "), " +
         std::to_string(std::thread::hardware_concurrency()) + " cores, " +
         (avx512 ? "AVX-512" : "AVX2 (no AVX-512 in CPUID)");
}

std::string mixbench::loadAverage() {
  std::string s = readFile("/proc/loadavg");
  std::istringstream is(s);
  std::string a, b, c;
  is >> a >> b >> c;
  return a + " " + b + " " + c;
}

CpuClock CpuClock::now() {
  CpuClock c;
  c.wall = Clock::now();
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0,
         softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >>
      steal;
  c.busy = (user + nice + system + irq + softirq + steal) /
           double(sysconf(_SC_CLK_TCK));
  struct rusage u;
  getrusage(RUSAGE_CHILDREN, &u);
  c.children = double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  return c;
}

double mixbench::otherLoad(const CpuClock &a, const CpuClock &b) {
  double wall = seconds(a.wall, b.wall);
  double other = (b.busy - a.busy) - (b.children - a.children);
  return wall > 0 ? std::max(0.0, other / wall) : 0.0;
}

bool mixbench::waitForIdle(double threshold, int maxWait) {
  auto start = Clock::now();
  bool said = false;
  for (;;) {
    CpuClock a = CpuClock::now();
    std::this_thread::sleep_for(std::chrono::seconds(3));
    double load = otherLoad(a, CpuClock::now());
    if (load < threshold)
      return true;
    if (seconds(start, Clock::now()) >= maxWait)
      return false;
    if (!said)
      std::cerr << "mix-bench:   the machine is busy (" << fmt("%.2f", load)
                << " cores used by other processes); waiting\n";
    said = true;
  }
}
