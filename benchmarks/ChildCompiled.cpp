//===- ChildCompiled.cpp - The compiled side of a row ---------------------===//
//
// The package's @grad then @adamw through mixrt::CompiledModel, as
// mix-run train calls them, timed step by step.
//
//===----------------------------------------------------------------------===//

#include "BenchInputs.h"
#include "BenchSupport.h"
#include "Children.h"

#include "mixrt/CompiledModel.h"
#include "mixrt/Manifest.h"

#include <cmath>

using namespace mixbench;

int mixbench::childCompiled(const Options &o) {
  StepStats st;
  st.rss0 = currentRssKiB();
  mixrt::Manifest man = mixrt::readManifest(o.pkg);
  mixrt::CompiledModel model(man);
  size_t n = man.params.size();
  std::vector<std::vector<float>> params = benchParams(man), grads(n), m(n),
                                  v(n);
  for (size_t i = 0; i < n; ++i) {
    size_t sz = params[i].size();
    grads[i].resize(sz);
    m[i].assign(sz, 0.0f);
    v[i].assign(sz, 0.0f);
  }
  auto ptrs = [](std::vector<std::vector<float>> &ts) {
    std::vector<float *> out;
    for (auto &t : ts)
      out.push_back(t.data());
    return out;
  };
  std::vector<int32_t> tokens, targets;
  benchBatch(man, tokens, targets);
  const double lr = 3e-4;
  for (int step = 1; step <= o.warmup + o.steps; ++step) {
    auto t0 = Clock::now();
    // As mix-run train (runtime/lib/Train/Trainer.cpp) calls them.
    std::vector<const float *> cp;
    std::vector<float *> gp;
    for (auto &p : params)
      cp.push_back(p.data());
    for (auto &g : grads)
      gp.push_back(g.data());
    mixrt::LossValues lv = model.grad(cp, tokens.data(), targets.data(), gp);
    if (!o.gradOnly) {
      std::array<float, 3> hyper = model.adamwHyperparameters(step, lr);
      std::vector<const float *> cg(gp.begin(), gp.end());
      model.adamw(ptrs(params), cg, ptrs(m), ptrs(v), hyper.data());
    }
    double dt = seconds(t0, Clock::now());
    if (step == 1) {
      st.loss0 = lv.loss;
      st.ce0 = lv.ce;
      st.aux0 = lv.aux;
    }
    st.lossLast = lv.loss;
    if (step > o.warmup)
      st.times.push_back(dt);
  }
  printResult("compiled", st);
  return 0;
}
