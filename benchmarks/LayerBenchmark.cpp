//===- LayerBenchmark.cpp - The mixture-layer benchmark -------------------===//
//
// Fits a line over N to 1-layer models' step times, compiled and libtorch,
// and times the layer alone in libtorch and the GEMMs of equal FLOPs.
//
//===----------------------------------------------------------------------===//

#include "LayerBenchmark.h"

#include "BenchModel.h"
#include "BenchSupport.h"
#include "Compile.h"

#include <algorithm>
#include <iostream>

using namespace mixbench;

namespace {

/// The step times of 1-layer cMoLLM models over N, grad only.
struct LayerFit {
  std::vector<double> ns, tc, tt;
  std::map<int64_t, std::string> orders;
  /// libtorch's setting at this size: the fastest for the largest N's
  /// model, kept for every N (one line is fitted through them) and for the
  /// layer timed alone.
  TorchThreads threads;
};

/// The compiled layer: 1-layer cMoLLM models at each N, grad only; the
/// part of the step time that grows with N (a least-squares line over
/// N) is the mixture layer (docs/performance.md). The same fit on the
/// libtorch model checks the method against the layer timed alone.
LayerFit measureOneLayerModels(const Options &o, Runner &runner,
                               const std::string &size, LayerResults &out) {
  LayerFit fit;
  std::vector<double> &ns = fit.ns, &tc = fit.tc, &tt = fit.tt;
  std::map<int64_t, std::string> &orders = fit.orders;
  std::vector<std::string> &layerNotes = out.notes;
  std::map<std::string, double> &layerOther = out.other;
  std::vector<int64_t> largestFirst = o.layerStreams;
  std::sort(largestFirst.rbegin(), largestFirst.rend());
  bool picked = false;
  for (int64_t n : largestFirst) {
    ModelConfig c;
    c.arch = "cmollm";
    c.streams = n;
    c.name = "cmollm-n" + std::to_string(n) + "-simple";
    c = withSize(c, size);
    c.l = 1;
    Package p = compile(o, c);
    if (!p.error.empty()) {
      layerNotes.push_back(size + " N=" + std::to_string(n) + ": " + p.error);
      continue;
    }
    orders[n] = p.order;
    std::string model = " --pkg " + shellQuote(p.pkg.string()) + " --model " +
                        shellQuote(c.encode()) + " --grad-only";
    std::string common = model + Runner::stepArgs(std::max(o.steps, 10), 2);
    std::string err;
    std::cerr << "mix-bench: layer " << size << " N=" << n
              << ": 1-layer model, compiled and libtorch\n";
    if (!picked) {
      fit.threads = runner.fastestThreads("--child torch" + model, false);
      picked = true;
    }
    // The fit over N magnifies one slow measurement, so the layer's
    // models take --rounds too.
    double other = 0;
    auto [rc, rt] = runner.alternated(
        "--child compiled" + common,
        "--child torch" + common + fit.threads.args(), err, other);
    layerOther[size] = std::max(layerOther[size], other);
    if (rc.empty() || rt.empty()) {
      layerNotes.push_back(size + " N=" + std::to_string(n) + ": " + err);
      continue;
    }
    ns.push_back(double(n));
    tc.push_back(num(rc[0], "median_s"));
    tt.push_back(num(rt[0], "median_s"));
  }
  return fit;
}

/// The intercept of the least-squares line through (ns[i], y[i]); NaN
/// for fewer than two points.
double intercept(const std::vector<double> &ns, const std::vector<double> &y) {
  size_t k = ns.size();
  if (k < 2)
    return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < k; ++i)
    mx += ns[i] / double(k), my += y[i] / double(k);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < k; ++i)
    sxy += (ns[i] - mx) * (y[i] - my), sxx += (ns[i] - mx) * (ns[i] - mx);
  return my - sxy / sxx * mx;
}

/// The layer child at \p size: libtorch's loop and stacked forms and the
/// OpenBLAS GEMMs, a row a N with the compiled side's fit.
void measureLayerAlone(const Options &o, Runner &runner,
                       const std::string &size, const LayerFit &fit,
                       LayerResults &out) {
  const std::vector<double> &ns = fit.ns, &tc = fit.tc, &tt = fit.tt;
  const std::map<int64_t, std::string> &orders = fit.orders;
  double ic = intercept(ns, tc), it = intercept(ns, tt);
  ModelConfig lc = withSize(ModelConfig(), size);
  out.threads[size] = fit.threads;
  std::string err;
  std::cerr << "mix-bench: layer " << size
            << ": libtorch loop, stacked and OpenBLAS GEMM\n";
  std::string streams;
  for (int64_t n : o.layerStreams)
    streams += (streams.empty() ? "" : ",") + std::to_string(n);
  double other = 0;
  auto rl =
      runner.measured({"--child layer --model " + shellQuote(lc.encode()) +
                       " --layer-streams " + streams + fit.threads.args() +
                       Runner::stepArgs(o.steps, 2)},
                      err, other)[0];
  out.other[size] = std::max(out.other[size], other);
  if (rl.empty())
    out.notes.push_back(size + ": layer child: " + err);
  for (const Result &r : rl) {
    if (r.at("kind") == "sgemm1024") {
      out.sgemm[size] = num(r, "gflops");
      continue;
    }
    LayerRow lr;
    lr.size = size;
    lr.n = int64_t(num(r, "n"));
    lr.loop = num(r, "loop_s");
    lr.stacked = num(r, "stacked_s");
    lr.gemm = num(r, "gemm_s");
    lr.flops = num(r, "flops");
    lr.order = orders.count(lr.n) ? orders.at(lr.n) : "?";
    for (size_t i = 0; i < ns.size(); ++i)
      if (int64_t(ns[i]) == lr.n) {
        lr.compiled = tc[i] - ic;
        lr.torchFit = tt[i] - it;
      }
    out.rows.push_back(lr);
  }
}

} // namespace

LayerResults mixbench::benchmarkLayer(const Options &o, Runner &runner) {
  LayerResults out;
  for (const std::string &size : o.sizes) {
    LayerFit fit = measureOneLayerModels(o, runner, size, out);
    measureLayerAlone(o, runner, size, fit, out);
  }
  return out;
}
