//===- Tables.cpp - mix-bench's tables ------------------------------------===//
//
// Tokens a second, GFLOP/s against the nominal peak, peak memory and the
// first losses of every row, in markdown.
//
//===----------------------------------------------------------------------===//

#include "Tables.h"

#include "BenchSupport.h"
#include "Machine.h"

#include <torch/version.h>

#include <cmath>
#include <sstream>

using namespace mixbench;

namespace {

std::string tokps(const ModelConfig &c, const Result &r) {
  double t = num(r, "median_s");
  return std::isnan(t) ? "–" : fmt("%.0f", double(c.b * c.s) / t);
}

std::string gflops(const ModelConfig &c, const Result &r, double peak) {
  double t = num(r, "median_s");
  if (std::isnan(t))
    return "–";
  double g = c.trainFlopsPerStep() / t / 1e9;
  return fmt("%.1f", g) + " (" + fmt("%.0f", 100 * g / peak) + "%)";
}

std::string mib(const Result &r) {
  double m = num(r, "maxrss_kib"), z = num(r, "rss0_kib");
  return std::isnan(m) ? "–" : fmt("%.0f", (m - z) / 1024);
}

/// "1, 2".
std::string joinInts(const std::vector<int> &values) {
  std::string out;
  for (int v : values)
    out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out;
}

/// How, when and on what the run was measured.
void writePreamble(std::ostream &md, const Options &o, const RunInfo &info) {
  std::string loadEnd = loadAverage();
  md << "Measured " << info.date << " by `" << info.command << "`  \n"
     << "Machine: " << cpuModel() << "; fp32 FMA peak measured "
     << fmt("%.0f", info.peak2) << " GFLOP/s on 2 threads ("
     << fmt("%.0f", info.peak1) << " on 1), nominal "
     << fmt("%.0f", info.nominalPeak)
     << " GFLOP/s (% columns use the nominal peak)  \n"
     << "Load average at start " << info.loadStart << ", at end " << loadEnd
     << "; *other load*: cores kept busy by other processes while a row "
        "was measured (/proc/stat less the harness's children); rows over "
     << fmt("%.2f", o.maxOtherLoad) << " are measured again up to " << o.retries
     << " times  \n"
     << "libtorch " << TORCH_VERSION
     << " at its fastest thread setting, found for each row and precision "
        "by a probe of every setting (fp32: intra-op threads "
     << joinInts(o.torchThreads) << " x OpenBLAS threads "
     << joinInts(o.blasThreads) << "; bf16 autocast: intra-op threads "
     << joinInts(o.bf16Threads)
     << ") and named in the table's *libtorch threads* column. "
     << "Compiled: mixc's package through mixrt::CompiledModel (@grad + "
     << "@adamw). Median of " << o.steps << " timed steps after " << o.warmup
     << " warm-up (bf16: " << o.bf16Steps << " after " << o.bf16Warmup << ")"
     << (o.rounds > 1 ? "; fp32 compiled and libtorch alternately " +
                            std::to_string(o.rounds) +
                            " times a row, each side's median round"
                      : std::string())
     << ".\n\n";
}

/// The training-step table: a row a model and size.
void writeStepTable(std::ostream &md, const Options &o, double nominalPeak,
                    const std::vector<Row> &rows) {
  md << "### Training step (grad + AdamW)\n\n"
     << "| size | model | compiled tok/s | libtorch fp32 tok/s | compiled / "
        "libtorch | libtorch bf16 tok/s | compiled bf16 tok/s (/ libtorch "
        "bf16) | GFLOP/step | "
        "compiled GFLOP/s (% peak) | libtorch GFLOP/s (% peak) | peak MiB "
        "compiled / libtorch | first loss compiled / libtorch (rel. diff) | "
        "libtorch threads fp32; bf16 | other load |\n"
     << "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|---:|"
        "\n";
  for (const Row &r : rows) {
    const ModelConfig &c = r.c;
    std::string name = c.name;
    if (!r.order.empty())
      name += " (" + r.order + ")";
    if (!r.error.empty() && !r.checked) {
      md << "| " << c.size << " | " << name << " | **not reported: " << r.error
         << "** | | | | | " << fmt("%.1f", c.trainFlopsPerStep() / 1e9)
         << " | | | | | | |\n";
      continue;
    }
    double ratio = num(r.torch, "median_s") / num(r.compiled, "median_s");
    md << "| " << c.size << " | " << name << " | " << tokps(c, r.compiled)
       << " | " << tokps(c, r.torch) << " | " << fmt("%.2f", ratio) << " | "
       << (r.bf16.empty() ? std::string("–") : tokps(c, r.bf16)) << " | "
       << (r.compiledBf16.empty()
               ? std::string("–")
               : tokps(c, r.compiledBf16) +
                     (r.bf16.empty() ? std::string()
                                     : " (" +
                                           fmt("%.2f", num(r.bf16, "median_s") /
                                                           num(r.compiledBf16,
                                                               "median_s")) +
                                           "x)"))
       << " | " << fmt("%.1f", c.trainFlopsPerStep() / 1e9) << " | "
       << gflops(c, r.compiled, nominalPeak) << " | "
       << gflops(c, r.torch, nominalPeak) << " | " << mib(r.compiled) << " / "
       << mib(r.torch) << " | " << fmt("%.6f", num(r.compiled, "loss0"))
       << " / " << fmt("%.6f", num(r.torch, "loss0")) << " ("
       << fmt("%.1e", r.relDiff) << ") | " << r.torchThreads.describe()
       << (r.bf16.empty() ? std::string() : "; " + r.bf16Threads.describe())
       << " | " << fmt("%.2f", r.other)
       << (r.other > o.maxOtherLoad ? " (busy)" : "") << " |\n";
  }
}

/// Each cMoLLM model's step time over the dense model's of its size.
void writeScalingTable(std::ostream &md, const Options &o,
                       const std::vector<Row> &rows) {
  md << "\n### Horizontal scaling: training-step time of cMoLLM (simple "
        "gating) over dense\n\n"
     << "| size | N | compiled | libtorch | paper's FFN cost (N+1)/2 | "
        "whole-step FLOP ratio |\n|---|---:|---:|---:|---:|---:|\n";
  for (const std::string &size : o.sizes) {
    const Row *dense = nullptr;
    for (const Row &r : rows)
      if (r.c.size == size && r.c.name == "dense" && r.checked)
        dense = &r;
    if (!dense)
      continue;
    for (const Row &r : rows) {
      if (r.c.size != size || r.c.arch != "cmollm" || r.c.gating != "simple" ||
          !r.checked)
        continue;
      double n = double(r.c.streams);
      md << "| " << size << " | " << r.c.streams << " | "
         << fmt("%.2f",
                num(r.compiled, "median_s") / num(dense->compiled, "median_s"))
         << " | "
         << fmt("%.2f",
                num(r.torch, "median_s") / num(dense->torch, "median_s"))
         << " | " << fmt("%.1f", (n + 1) / 2) << " | "
         << fmt("%.2f", r.c.trainFlopsPerStep() / dense->c.trainFlopsPerStep())
         << " |\n";
    }
  }
}

/// The mixture layer alone, with the OpenBLAS sgemm rate and notes.
void writeLayerTable(std::ostream &md, const Options &o,
                     const LayerResults &layer) {
  md << "\n### The cMoLLM mixture layer alone (forward + backward, "
        "T = B*S tokens)\n\n"
     << "Times in ms; the ratio to the OpenBLAS GEMM of equal FLOPs "
        "(6 T d N f) in brackets. Compiled: the N-proportional part of a "
        "1-layer model's @grad (see docs/performance.md); the same "
        "estimate on the libtorch model is shown as a check of the "
        "method.\n\n"
     << "| size | N | compiled (order) | libtorch branch loop | libtorch "
        "stacked MoE | OpenBLAS GEMM (GFLOP/s) | check: libtorch stacked by "
        "the compiled side's method |\n"
     << "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const LayerRow &l : layer.rows) {
    auto ms = [&](double s) {
      return std::isnan(s)
                 ? std::string("–")
                 : fmt("%.1f", 1e3 * s) + " (" + fmt("%.2f", s / l.gemm) + ")";
    };
    md << "| " << l.size << " | " << l.n << " | " << ms(l.compiled) << " "
       << l.order << " | " << ms(l.loop) << " | " << ms(l.stacked) << " | "
       << fmt("%.1f", 1e3 * l.gemm) << " ("
       << fmt("%.0f", l.flops / l.gemm / 1e9) << ") | " << ms(l.torchFit)
       << " |\n";
  }
  for (auto &[size, t] : layer.threads)
    md << "\nlibtorch (" << size << "): " << t.describe()
       << " threads, the fastest setting for the largest N.";
  for (auto &[size, g] : layer.sgemm)
    md << "\nOpenBLAS sgemm 1024^3 (" << size << " run): " << fmt("%.0f", g)
       << " GFLOP/s.";
  for (auto &[size, l] : layer.other)
    md << "\nOther load during the " << size << " layer runs: at most "
       << fmt("%.2f", l) << " cores" << (l > o.maxOtherLoad ? " (busy)" : "")
       << ".";
  md << "\n";
  for (auto &n : layer.notes)
    md << "\nnote: " << n;
}

} // namespace

std::string mixbench::formatTables(const Options &o, const RunInfo &info,
                                   const std::vector<Row> &rows,
                                   const LayerResults &layer) {
  std::ostringstream md;
  writePreamble(md, o, info);
  writeStepTable(md, o, info.nominalPeak, rows);
  writeScalingTable(md, o, rows);
  if (o.layer)
    writeLayerTable(md, o, layer);
  md << "\n";
  return md.str();
}
