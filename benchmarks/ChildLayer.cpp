//===- ChildLayer.cpp - The mixture layer alone ---------------------------===//
//
// The cMoLLM mixture layer in libtorch (the branch loop a user writes, the
// stacked MoE form) and the dense GEMMs of equal FLOPs through OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "BenchModel.h"
#include "BenchSupport.h"
#include "Children.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>

using mixbench::ModelConfig;
using torch::Tensor;
using namespace mixbench;
namespace F = torch::nn::functional;

namespace {
template <typename Fn> double timeIt(Fn &&fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i)
    fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    fn();
    t.push_back(seconds(t0, Clock::now()));
  }
  return median(t);
}
} // namespace

int mixbench::childLayer(const Options &o) {
  torch::set_num_threads(o.torchThreads.front());
  setBlasThreads(o.blasThreads.front());
  reportBlas();
  // The BLAS itself, on one square product.
  {
    Tensor a = torch::randn({1024, 1024}), b = torch::randn({1024, 1024}),
           c = torch::empty({1024, 1024});
    double t = timeIt([&] { at::mm_out(c, a, b); }, 2, 10);
    std::printf("RESULT kind=sgemm1024 s=%.9g gflops=%.6g\n", t,
                2.0 * 1024 * 1024 * 1024 / t / 1e9);
  }
  ModelConfig cfg = ModelConfig::decode(o.model);
  int64_t t = cfg.b * cfg.s, d = cfg.d, f = cfg.f;
  for (int64_t n : o.layerStreams) {
    torch::manual_seed(0);
    Tensor m = torch::randn({t, d}).requires_grad_(true);
    Tensor g = torch::randn({t, n}).softmax(-1).requires_grad_(true);
    Tensor k = (torch::randn({n, f, d}) * 0.02).requires_grad_(true);
    Tensor kb = torch::zeros({n, f}).requires_grad_(true);
    Tensor up = torch::randn({t, f});
    std::vector<Tensor> leaves = {m, g, k, kb};
    auto clear = [&] {
      for (Tensor &x : leaves)
        x.mutable_grad() = Tensor();
    };
    // (a) The branch-wise loop: every expert a linear layer, then the
    // gate-weighted sum.
    auto loop = [&] {
      clear();
      Tensor u = g.narrow(1, 0, 1) * F::linear(m, k[0], kb[0]);
      for (int64_t e = 1; e < n; ++e)
        u = u + g.narrow(1, e, 1) * F::linear(m, k[e], kb[e]);
      u.backward(up);
    };
    // (a') The stacked MoE form of the baseline model: one product against
    // the stacked kernels, then the gate-weighted sum as an einsum.
    auto stacked = [&] {
      clear();
      Tensor outs =
          F::linear(m, k.view({n * f, d}), kb.view({n * f})).view({t, n, f});
      torch::einsum("tn,tnf->tf", {g, outs}).backward(up);
    };
    // (b) Dense GEMMs of equal FLOPs: a linear layer d -> N f, forward and
    // its two backward products, through OpenBLAS into preallocated outputs.
    Tensor x = torch::randn({t, d}), w = torch::randn({n * f, d}) * 0.02,
           dy = torch::randn({t, n * f}), y = torch::empty({t, n * f}),
           dx = torch::empty({t, d}), dw = torch::empty({n * f, d});
    auto gemm = [&] {
      at::mm_out(y, x, w.t());
      at::mm_out(dx, dy, w);
      at::mm_out(dw, dy.t(), x);
    };
    int reps = std::max(o.steps, 10);
    double tLoop = timeIt(loop, 2, reps);
    double tStacked = timeIt(stacked, 2, reps);
    double tGemm = timeIt(gemm, 2, reps);
    double flops = 6.0 * double(t) * double(d) * double(n) * double(f);
    std::printf("RESULT kind=layer n=%lld loop_s=%.9g stacked_s=%.9g "
                "gemm_s=%.9g flops=%.9g\n",
                (long long)n, tLoop, tStacked, tGemm, flops);
    std::fflush(stdout);
  }
  return 0;
}
