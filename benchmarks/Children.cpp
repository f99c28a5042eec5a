//===- Children.cpp - The child processes of mix-bench --------------------===//
//
// Which child to run, and the RESULT line of a training-step child.
//
//===----------------------------------------------------------------------===//

#include "Children.h"

#include "BenchSupport.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>

using namespace mixbench;

int mixbench::runChildProcess(const Options &o) {
  try {
    if (o.child == "compiled")
      return childCompiled(o);
    if (o.child == "torch") {
      if (!o.bf16)
        reportBlas();
      return childTorch(o);
    }
    if (o.child == "layer")
      return childLayer(o);
    std::cerr << "mix-bench: unknown child " << o.child << "\n";
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "mix-bench: " << e.what() << "\n";
    return 1;
  }
}

void mixbench::printResult(const char *side, const StepStats &s) {
  std::vector<double> t = s.times;
  std::sort(t.begin(), t.end());
  std::printf("RESULT side=%s loss0=%.9g ce0=%.9g aux0=%.9g loss_last=%.9g "
              "median_s=%.9g min_s=%.9g max_s=%.9g steps=%zu rss0_kib=%ld "
              "maxrss_kib=%ld\n",
              side, s.loss0, s.ce0, s.aux0, s.lossLast, median(s.times),
              t.empty() ? NAN : t.front(), t.empty() ? NAN : t.back(), t.size(),
              s.rss0, maxRssKiB());
  std::fflush(stdout);
}
