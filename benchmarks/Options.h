//===- Options.h - mix-bench's command line ---------------------*- C++ -*-===//
//
// The options of the driver and of the child processes it starts (the
// harness re-executes itself with --child).
//
//===----------------------------------------------------------------------===//

#ifndef MIXBENCH_OPTIONS_H
#define MIXBENCH_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

namespace mixbench {

struct Options {
  // Child processes.
  std::string child, pkg, model;
  bool gradOnly = false, bf16 = false;
  // Everything.
  std::string mixc, work = "build/bench", markdown, only;
  // bf16 autocast runs at ~3 GFLOP/s on CPUs without AVX-512 BF16: by
  // default a dense and a mixture model of each size only.
  std::string bf16Only = "^(dense|cmollm-n4-simple)$";
  std::vector<std::string> sizes = {"small", "wide"};
  std::vector<int64_t> layerStreams = {2, 4, 8};
  int steps = 10, warmup = 2, bf16Steps = 3, bf16Warmup = 1;
  // libtorch's thread settings: the driver tries every combination of
  // these lists and times each row at its fastest (Runner::fastestThreads);
  // a child gets one value each.
  std::vector<int> torchThreads = {1, 2}, blasThreads = {1, 2},
                   bf16Threads = {1, 2};
  bool quick = false, layer = true;
  // --decode: the sampling benchmark (DecodeBenchmark.cpp) instead.
  bool decode = false;
  // Interference: rows measured while other processes kept more than this
  // many cores busy are measured again once the machine is idle.
  double maxOtherLoad = 0.25;
  int retries = 2, maxWait = 900;
  // Rounds of (compiled, libtorch fp32) a row: each side's result is its
  // round of median step time, so that the machine's drift during a row
  // falls on both sides.
  int rounds = 1;
  std::vector<std::string> argv;
};

/// Parses the command line; --help and bad options end the process (exit
/// status 0 and 2), --quick's defaults are applied.
Options parseOptions(int argc, char **argv);

} // namespace mixbench

#endif // MIXBENCH_OPTIONS_H
