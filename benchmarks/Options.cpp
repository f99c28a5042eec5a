//===- Options.cpp - mix-bench's command line -----------------------------===//
//
// The usage text, and the options parsed with the defaults --quick
// changes.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>

using namespace mixbench;

namespace {

const char *kUsage =
    R"(mix-bench: the compiled training step against libtorch (issue 7)

  mix-bench [options]          compile, run every side, print the tables

  --mixc PATH        mixc to compile with (default: $MIXC, else mixc next to
                     mix-bench, else build/bin/mixc)
  --work DIR         packages and logs (default build/bench)
  --markdown FILE    also write the tables there (default WORK/results.md,
                     WORK/results-quick.md with --quick)
  --quick            the harness's own test: small size, 8 models, 3 timed
                     steps after 1 warm-up, bf16 for dense only
  --sizes LIST       small,wide (default both)
  --only REGEX       models whose name matches (e.g. 'dense|cmollm-n2')
  --steps N          timed steps per side (default 10; the median is reported)
  --warmup N         untimed steps first (default 2)
  --bf16 REGEX       models timed under bf16 autocast too (default
                     '^(dense|cmollm-n4-simple)$'; '.' for all)
  --bf16-steps N     timed bf16 steps (default 3; bf16 is slow on CPUs
                     without AVX-512 BF16, see docs/performance.md)
  --no-bf16          no bf16 column
  --no-layer         skip the mixture-layer microbenchmark
  --layer-streams L  N of the layer benchmark (default 2,4,8)
  --torch-threads L  libtorch fp32 intra-op threads to try (default 1,2)
  --blas-threads L   OpenBLAS threads for libtorch fp32 to try (default 1,2)
  --bf16-threads L   libtorch intra-op threads under bf16 to try (default
                     1,2); each row's libtorch side is timed at the fastest
                     setting of a short probe of every combination
  --max-other-load X a row during which other processes kept more than X
                     cores busy (from /proc/stat) is measured again
                     (default 0.25)
  --retries N        at most N times (default 2; 0 with --quick)
  --rounds N         time compiled and libtorch fp32 alternately N times a
                     row (and each 1-layer model of the layer benchmark);
                     each side reports its median round (default 1)
  --max-wait S       waiting at most S seconds for an idle machine first
                     (default 900; 0 with --quick)
  --decode           instead: sampling tokens/s of the decode step (its
                     key-value cache) against libtorch eager with a cache
                     and against the whole forward a token, for the tiny
                     example and GPT-2-small-size dense and cMoLLM (--only
                     selects among tiny-dense, gpt2-small-dense,
                     gpt2-small-cmollm-n4-simple)
)";

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string item;
  while (std::getline(is, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

/// A comma-separated list of thread counts, each at least 1.
std::vector<int> parseThreads(const std::string &flag,
                              const std::string &text) {
  std::vector<int> out;
  for (const std::string &s : splitList(text)) {
    int n = std::stoi(s);
    if (n < 1)
      throw std::runtime_error(flag + ": thread counts must be at least 1");
    out.push_back(n);
  }
  if (out.empty())
    throw std::runtime_error(flag + " needs at least one thread count");
  return out;
}

} // namespace

Options mixbench::parseOptions(int argc, char **argv) {
  Options o;
  bool stepsSet = false, warmupSet = false, bf16StepsSet = false,
       sizesSet = false, bf16Set = false, retriesSet = false, waitSet = false;
  for (int i = 0; i < argc; ++i)
    o.argv.push_back(argv[i]);
  auto value = [&](int &i) -> std::string {
    if (i + 1 >= argc) {
      std::cerr << "mix-bench: " << argv[i] << " needs a value\n";
      std::exit(2);
    }
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--child")
      o.child = value(i);
    else if (a == "--pkg")
      o.pkg = value(i);
    else if (a == "--model")
      o.model = value(i);
    else if (a == "--grad-only")
      o.gradOnly = true;
    else if (a == "--bf16-autocast")
      o.bf16 = true;
    else if (a == "--mixc")
      o.mixc = value(i);
    else if (a == "--work")
      o.work = value(i);
    else if (a == "--markdown")
      o.markdown = value(i);
    else if (a == "--only")
      o.only = value(i);
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--decode")
      o.decode = true;
    else if (a == "--sizes") {
      o.sizes = splitList(value(i));
      sizesSet = true;
    } else if (a == "--steps") {
      o.steps = std::stoi(value(i));
      stepsSet = true;
    } else if (a == "--warmup") {
      o.warmup = std::stoi(value(i));
      warmupSet = true;
    } else if (a == "--bf16") {
      o.bf16Only = value(i);
      bf16Set = true;
    } else if (a == "--bf16-steps") {
      o.bf16Steps = std::stoi(value(i));
      bf16StepsSet = true;
    } else if (a == "--no-bf16") {
      o.bf16Only = "^$";
      bf16Set = true;
    } else if (a == "--no-layer")
      o.layer = false;
    else if (a == "--layer-streams") {
      o.layerStreams.clear();
      for (auto &s : splitList(value(i)))
        o.layerStreams.push_back(std::stoll(s));
    } else if (a == "--torch-threads")
      o.torchThreads = parseThreads(a, value(i));
    else if (a == "--blas-threads")
      o.blasThreads = parseThreads(a, value(i));
    else if (a == "--bf16-threads")
      o.bf16Threads = parseThreads(a, value(i));
    else if (a == "--max-other-load")
      o.maxOtherLoad = std::stod(value(i));
    else if (a == "--rounds") {
      o.rounds = std::stoi(value(i));
      if (o.rounds < 1)
        throw std::runtime_error("--rounds must be at least 1");
    } else if (a == "--retries") {
      o.retries = std::stoi(value(i));
      retriesSet = true;
    } else if (a == "--max-wait") {
      o.maxWait = std::stoi(value(i));
      waitSet = true;
    } else {
      std::cerr << "mix-bench: unknown option " << a << "\n" << kUsage;
      std::exit(2);
    }
  }
  if (o.quick) {
    if (!stepsSet)
      o.steps = 3;
    if (!warmupSet)
      o.warmup = 1;
    if (!bf16StepsSet)
      o.bf16Steps = 1;
    if (!sizesSet)
      o.sizes = {"small"};
    if (!bf16Set)
      o.bf16Only = "^dense$";
    if (!retriesSet)
      o.retries = 0;
    if (!waitSet)
      o.maxWait = 0;
    if (o.only.empty())
      o.only = "^(dense|cmollm-n[1248]-simple|cmollm-n4-multi_head|"
               "parascale-p4|altup-k2)$";
  }
  return o;
}
