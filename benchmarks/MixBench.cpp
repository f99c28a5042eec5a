//===- MixBench.cpp - Compiled training step against libtorch (issue 7) ---===//
//
// mix-bench compiles every benchmark model with mixc, then measures each
// side in a process of its own (the harness re-executes itself), so that the
// peak memory of one side never includes the other's:
//
//   compiled   the package's @grad then @adamw through mixrt::CompiledModel,
//              as mix-run train calls them;
//   torch      the same model in libtorch (BenchModel.cpp), fp32, eager,
//              autograd, clip_grad_norm_ and torch::optim::AdamW;
//   torch-bf16 the same under CPU autocast to bfloat16;
//   layer      the cMoLLM mixture layer alone in libtorch (the branch loop a
//              user writes, the stacked MoE form) and the dense GEMMs of
//              equal FLOPs through OpenBLAS.
//
// Both sides start from the same parameters (the manifest's initialisation,
// mix-run init's values, plus N(0, 0.05^2) noise so that every path carries
// signal) and train on the same batch; a row is reported only if the two
// first losses agree to 1e-4 relative.
//
// Run `mix-bench --help` for the options; scripts/bench.sh is the one
// command that builds and runs it.
//
//===----------------------------------------------------------------------===//

#include "Children.h"

#include "DecodeBenchmark.h"
#include "LayerBenchmark.h"
#include "Machine.h"
#include "Options.h"
#include "Runner.h"
#include "StepBenchmark.h"
#include "Tables.h"
#include <algorithm>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace mixbench;
namespace fs = std::filesystem;

namespace {

/// Resolves --mixc (default: $MIXC, else mixc next to mix-bench, else
/// build/bin/mixc) to an absolute path; false, having said so, if there is
/// no such file.
bool findMixc(Options &o) {
  fs::path self = fs::read_symlink("/proc/self/exe");
  if (o.mixc.empty()) {
    const char *env = std::getenv("MIXC");
    fs::path sibling = self.parent_path() / "mixc";
    o.mixc = env && *env           ? env
             : fs::exists(sibling) ? sibling.string()
                                   : "build/bin/mixc";
  }
  if (!fs::exists(o.mixc)) {
    std::cerr << "mix-bench: mixc not found at " << o.mixc
              << " (--mixc PATH or MIXC=PATH)\n";
    return false;
  }
  o.mixc = fs::absolute(o.mixc).string();
  return true;
}

/// Creates the work directory and truncates the children's log; returns
/// the log's path.
fs::path prepareWorkDirectory(Options &o) {
  fs::create_directories(o.work);
  if (o.markdown.empty())
    o.markdown =
        (fs::path(o.work) / (o.quick ? "results-quick.md" : "results.md"))
            .string();
  fs::path log = fs::path(o.work) / "children.log";
  std::ofstream(log, std::ios::trunc);
  // libtorch's fp32 products go to OpenBLAS, which starts this many
  // threads when it initialises; each child then uses its setting's count
  // (setBlasThreads).
  setenv("OPENBLAS_NUM_THREADS",
         std::to_string(
             *std::max_element(o.blasThreads.begin(), o.blasThreads.end()))
             .c_str(),
         1);
  return log;
}

/// The command line, the time, the load average and the machine's FMA
/// peak, measured once the machine is idle enough.
RunInfo startRun(const Options &o) {
  RunInfo info;
  for (auto &a : o.argv)
    info.command += (info.command.empty() ? "" : " ") + a;
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  info.date = date;
  info.loadStart = loadAverage();
  if (o.maxWait > 0)
    waitForIdle(o.maxOtherLoad, o.maxWait);
  info.peak1 = measurePeak(1);
  info.peak2 = measurePeak(2);
  info.nominalPeak = 233.0;
  std::cerr << "mix-bench: measured FMA peak " << fmt("%.0f", info.peak2)
            << " GFLOP/s on 2 threads (" << fmt("%.0f", info.peak1)
            << " on 1); load average " << info.loadStart << "\n";
  return info;
}

bool allChecked(const std::vector<Row> &rows) {
  bool allChecked = true;
  for (const Row &r : rows)
    allChecked = allChecked && r.checked;
  return allChecked;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
  if (!o.child.empty())
    return runChildProcess(o);
  if (!findMixc(o))
    return 2;
  fs::path log = prepareWorkDirectory(o);
  RunInfo info = startRun(o);
  if (o.decode) {
    bool ok = true;
    std::string md = "Measured " + info.date + " by `" + info.command +
                     "`\n\n" + benchmarkDecode(o, ok);
    std::cout << md;
    std::ofstream(o.markdown) << md;
    std::cerr << "mix-bench: tables written to " << o.markdown << "\n";
    return ok ? 0 : 1;
  }
  Runner runner(o, log);
  std::vector<Row> rows = benchmarkSteps(o, runner);
  LayerResults layer;
  if (o.layer)
    layer = benchmarkLayer(o, runner);
  std::string md = formatTables(o, info, rows, layer);
  std::cout << md;
  std::ofstream(o.markdown) << md;
  std::cerr << "mix-bench: tables written to " << o.markdown << "\n";
  return allChecked(rows) ? 0 : 1;
}
