//===- StepBenchmark.cpp - The training-step benchmark --------------------===//
//
// Compiles each model, times the compiled and the libtorch step in child
// processes, and reports a row only if their first losses agree.
//
//===----------------------------------------------------------------------===//

#include "StepBenchmark.h"

#include "BenchSupport.h"
#include "Compile.h"

#include <algorithm>
#include <iostream>
#include <regex>

using namespace mixbench;

namespace {

/// The libtorch step under bf16 autocast and the compiled step with bf16
/// products (mixc --precision bf16), into \p row.
void measureBf16(const Options &o, Runner &runner, const ModelConfig &c,
                 const std::string &common, Row &row, std::string &err) {
  std::cerr << "\n";
  row.bf16Threads =
      runner.fastestThreads("--child torch --bf16-autocast" + common, true);
  std::cerr << "mix-bench:   libtorch bf16\n";
  auto rb = runner.run("--child torch --bf16-autocast" + common +
                           row.bf16Threads.args() +
                           Runner::stepArgs(o.bf16Steps, o.bf16Warmup),
                       err);
  if (!rb.empty())
    row.bf16 = rb[0];
  // The compiled step with bf16 products (mixc --precision bf16).
  Package pb = compile(o, c, /*bf16=*/true);
  std::cerr << "mix-bench:   compiled bf16";
  if (pb.error.empty()) {
    auto rcb = runner.run(
        "--child compiled --pkg " + shellQuote(pb.pkg.string()) + " --model " +
            shellQuote(c.encode()) + Runner::stepArgs(o.steps, o.warmup),
        err);
    if (!rcb.empty())
      row.compiledBf16 = rcb[0];
  }
}

/// Compares the two sides' first losses (1e-4 relative) and says so.
void checkFirstLosses(Row &row) {
  double a = num(row.compiled, "loss0"), b = num(row.torch, "loss0");
  row.relDiff = std::fabs(a - b) / std::fabs(b);
  row.checked = row.relDiff <= 1e-4;
  std::cerr << "mix-bench:   first loss: compiled " << fmt("%.7f", a)
            << ", libtorch " << fmt("%.7f", b) << " (rel. diff "
            << fmt("%.1e", row.relDiff) << ")"
            << (row.bf16.empty()
                    ? ""
                    : ", libtorch bf16 " + fmt("%.7f", num(row.bf16, "loss0")))
            << (row.compiledBf16.empty()
                    ? ""
                    : ", compiled bf16 " +
                          fmt("%.7f", num(row.compiledBf16, "loss0")))
            << "; step " << fmt("%.3f", num(row.compiled, "median_s"))
            << " s vs " << fmt("%.3f", num(row.torch, "median_s")) << " s\n";
  if (!row.checked)
    row.error = "loss check failed: compiled " + fmt("%.7g", a) +
                ", libtorch " + fmt("%.7g", b);
}

/// Compiles and measures one model; a row with its error if that failed.
Row measureRow(const Options &o, Runner &runner, const std::string &size,
               const ModelConfig &c, const std::regex &bf16Re) {
  Row row;
  row.c = c;
  Package p = compile(o, c);
  row.order = p.order;
  if (!p.error.empty()) {
    row.error = p.error;
    return row;
  }
  std::string common = " --pkg " + shellQuote(p.pkg.string()) + " --model " +
                       shellQuote(c.encode());
  std::string err;
  std::cerr << "mix-bench: " << size << "/" << c.name << "\n";
  row.torchThreads = runner.fastestThreads("--child torch" + common, false);
  std::cerr << "mix-bench:   compiled, libtorch fp32";
  double other = 0;
  auto [rc, rt] = runner.alternated(
      "--child compiled" + common + Runner::stepArgs(o.steps, o.warmup),
      "--child torch" + common + row.torchThreads.args() +
          Runner::stepArgs(o.steps, o.warmup),
      err, other);
  row.other = std::max(row.other, other);
  if (!rc.empty())
    row.compiled = rc[0];
  if (!rt.empty())
    row.torch = rt[0];
  if (std::regex_search(c.name, bf16Re) && o.bf16Steps > 0)
    measureBf16(o, runner, c, common, row, err);
  std::cerr << "\n";
  if (rc.empty() || rt.empty())
    row.error = err;
  else
    checkFirstLosses(row);
  return row;
}

} // namespace

std::vector<Row> mixbench::benchmarkSteps(const Options &o, Runner &runner) {
  std::regex only(o.only.empty() ? ".*" : o.only);
  std::regex bf16Re(o.bf16Only.empty() ? ".*" : o.bf16Only);
  std::vector<Row> rows;
  for (const std::string &size : o.sizes)
    for (const ModelConfig &c : benchmarkModels(size))
      if (std::regex_search(c.name, only))
        rows.push_back(measureRow(o, runner, size, c, bf16Re));
  return rows;
}
