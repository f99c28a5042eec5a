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

#include "BenchModel.h"

#include "mixrt/CompiledModel.h"
#include "mixrt/Init.h"
#include "mixrt/Manifest.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <immintrin.h>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using mixbench::ModelConfig;
using torch::Tensor;
namespace fs = std::filesystem;
namespace F = torch::nn::functional;

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Resident set size now, in KiB.
long currentRssKiB() {
  long pages = 0, resident = 0;
  if (FILE *f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/// The largest resident set size of this process so far, in KiB.
long maxRssKiB() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

std::string readFile(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string fmt(const char *format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char ch : s)
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

//===----------------------------------------------------------------------===//
// Shared inputs: parameters and batch
//===----------------------------------------------------------------------===//

/// mix-run init's parameters plus N(0, 0.05^2) noise drawn from streams of
/// their own (seed 12345), identical in every process.
std::vector<std::vector<float>> benchParams(const mixrt::Manifest &man) {
  std::vector<std::vector<float>> out;
  for (const mixrt::ParamInfo &info : man.params) {
    std::vector<float> values = mixrt::initParam(info, man.seed);
    mixrt::SplitMix64 rng(mixrt::getStreamKey(12345, info.name));
    for (float &x : values) {
      double u1 = rng.nextUniform(), u2 = rng.nextUniform();
      x += float(0.05 * std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
    }
    out.push_back(std::move(values));
  }
  return out;
}

/// One fixed batch of tokens and targets, B*S ids each.
void benchBatch(const mixrt::Manifest &man, std::vector<int32_t> &tokens,
                std::vector<int32_t> &targets) {
  mixrt::SplitMix64 rng(7);
  int64_t n = man.batch * man.seq;
  for (int64_t i = 0; i < n; ++i)
    tokens.push_back(int32_t(rng.next() % uint64_t(man.vocabSize)));
  for (int64_t i = 0; i < n; ++i)
    targets.push_back(int32_t(rng.next() % uint64_t(man.vocabSize)));
}

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

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
  int torchThreads = 1, bf16Threads = 1, blasThreads = 2;
  bool quick = false, layer = true;
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
  --torch-threads N  libtorch intra-op threads (default 1)
  --blas-threads N   OPENBLAS_NUM_THREADS for libtorch (default 2)
  --bf16-threads N   libtorch intra-op threads under bf16 (default 1)
  --max-other-load X a row during which other processes kept more than X
                     cores busy (from /proc/stat) is measured again
                     (default 0.25)
  --retries N        at most N times (default 2; 0 with --quick)
  --rounds N         time compiled and libtorch fp32 alternately N times a
                     row (and each 1-layer model of the layer benchmark);
                     each side reports its median round (default 1)
  --max-wait S       waiting at most S seconds for an idle machine first
                     (default 900; 0 with --quick)
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

Options parseOptions(int argc, char **argv) {
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
      o.torchThreads = std::stoi(value(i));
    else if (a == "--blas-threads")
      o.blasThreads = std::stoi(value(i));
    else if (a == "--bf16-threads")
      o.bf16Threads = std::stoi(value(i));
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

//===----------------------------------------------------------------------===//
// Child: the compiled side
//===----------------------------------------------------------------------===//

struct StepStats {
  std::vector<double> times;
  double loss0 = NAN, ce0 = NAN, aux0 = NAN, lossLast = NAN;
  long rss0 = 0;
};

void printResult(const char *side, const StepStats &s) {
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

int childCompiled(const Options &o) {
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
  const double lr = 3e-4, beta1 = 0.9, beta2 = 0.95;
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
      float hyper[3] = {float(lr), float(1 - std::pow(beta1, double(step))),
                        float(1 - std::pow(beta2, double(step)))};
      std::vector<const float *> cg(gp.begin(), gp.end());
      model.adamw(ptrs(params), cg, ptrs(m), ptrs(v), hyper);
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

//===----------------------------------------------------------------------===//
// Child: libtorch
//===----------------------------------------------------------------------===//

/// Names the BLAS libtorch's fp32 products reach, on stderr; returns false
/// if it is not OpenBLAS.
bool reportBlas() {
  using IntFn = int (*)();
  using StrFn = char *(*)();
  auto threads = (IntFn)dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  auto config = (StrFn)dlsym(RTLD_DEFAULT, "openblas_get_config");
  auto core = (StrFn)dlsym(RTLD_DEFAULT, "openblas_get_corename");
  if (!threads) {
    std::cerr << "mix-bench: WARNING: libtorch's BLAS is not OpenBLAS "
                 "(install libopenblas0-pthread: scripts/setup.sh)\n";
    return false;
  }
  std::cerr << "mix-bench:   BLAS: OpenBLAS, " << threads() << " threads, "
            << (config ? config() : "?") << ", core " << (core ? core() : "?")
            << "\n";
  return true;
}

std::map<std::string, Tensor>
torchParams(const mixrt::Manifest &man,
            const std::vector<std::vector<float>> &values) {
  std::map<std::string, Tensor> out;
  for (size_t i = 0; i < man.params.size(); ++i) {
    const mixrt::ParamInfo &info = man.params[i];
    Tensor t = torch::from_blob(const_cast<float *>(values[i].data()),
                                info.shape, torch::kFloat32)
                   .clone();
    out[info.name] = t.requires_grad_(true);
  }
  return out;
}

int childTorch(const Options &o) {
  torch::set_num_threads(o.bf16 ? o.bf16Threads : o.torchThreads);
  StepStats st;
  st.rss0 = currentRssKiB();
  ModelConfig cfg = ModelConfig::decode(o.model);
  mixrt::Manifest man = mixrt::readManifest(o.pkg);
  std::vector<std::string> names;
  for (auto &info : man.params)
    names.push_back(info.name);
  mixbench::TorchModel model(cfg, torchParams(man, benchParams(man)));
  std::vector<Tensor> params = model.parameters(names), decay, noDecay;
  for (size_t i = 0; i < params.size(); ++i)
    (man.params[i].shape.size() >= 2 ? decay : noDecay).push_back(params[i]);
  const double lr = 3e-4;
  auto adamw = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(lr)
            .betas({0.9, 0.95})
            .eps(1e-8)
            .weight_decay(wd));
  };
  torch::optim::AdamW opt(
      {torch::optim::OptimizerParamGroup(decay, adamw(0.1)),
       torch::optim::OptimizerParamGroup(noDecay, adamw(0.0))},
      torch::optim::AdamWOptions(lr));
  std::vector<int32_t> tok32, tgt32;
  benchBatch(man, tok32, tgt32);
  Tensor tokens =
      torch::from_blob(tok32.data(), {man.batch, man.seq}, torch::kInt32)
          .to(torch::kInt64);
  Tensor targets =
      torch::from_blob(tgt32.data(), {man.batch, man.seq}, torch::kInt32)
          .to(torch::kInt64);
  int warmup = o.warmup, steps = o.steps;
  for (int step = 1; step <= warmup + steps; ++step) {
    auto t0 = Clock::now();
    for (Tensor &p : params)
      p.mutable_grad() = Tensor(); // zero_grad(set_to_none=True)
    mixbench::Losses l;
    if (o.bf16) {
      // What `with torch.autocast("cpu", dtype=torch.bfloat16):` does.
      at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
      at::autocast::set_cpu_enabled(true);
      at::autocast::increment_nesting();
      l = model.loss(tokens, targets);
      if (at::autocast::decrement_nesting() == 0)
        at::autocast::clear_cache();
      at::autocast::set_cpu_enabled(false);
    } else {
      l = model.loss(tokens, targets);
    }
    l.loss.backward();
    if (!o.gradOnly) {
      torch::nn::utils::clip_grad_norm_(params, 1.0);
      opt.step();
    }
    double dt = seconds(t0, Clock::now());
    if (step == 1) {
      st.loss0 = l.loss.item<double>();
      st.ce0 = l.ce.item<double>();
      st.aux0 = l.aux.item<double>();
    }
    st.lossLast = l.loss.item<double>();
    if (step > warmup)
      st.times.push_back(dt);
  }
  printResult(o.bf16 ? "torch-bf16" : "torch", st);
  return 0;
}

//===----------------------------------------------------------------------===//
// Child: the mixture layer alone in libtorch, and OpenBLAS GEMMs
//===----------------------------------------------------------------------===//

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

int childLayer(const Options &o) {
  torch::set_num_threads(o.torchThreads);
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

//===----------------------------------------------------------------------===//
// The machine
//===----------------------------------------------------------------------===//

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

/// Measured fp32 FMA peak of \p threads threads, GFLOP/s.
double measurePeak(int threads) {
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

std::string cpuModel() {
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

std::string loadAverage() {
  std::string s = readFile("/proc/loadavg");
  std::istringstream is(s);
  std::string a, b, c;
  is >> a >> b >> c;
  return a + " " + b + " " + c;
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

using Result = std::map<std::string, std::string>;

/// CPU seconds spent by the whole machine (/proc/stat) and by this
/// process's finished children, at one moment.
struct CpuClock {
  double busy = 0, children = 0;
  Clock::time_point wall;

  static CpuClock now() {
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
};

/// Cores kept busy by processes other than our children between a and b.
double otherLoad(const CpuClock &a, const CpuClock &b) {
  double wall = seconds(a.wall, b.wall);
  double other = (b.busy - a.busy) - (b.children - a.children);
  return wall > 0 ? std::max(0.0, other / wall) : 0.0;
}

/// Waits (at most \p maxWait seconds) until other processes keep fewer than
/// \p threshold cores busy over 3 seconds; false if they never did.
bool waitForIdle(double threshold, int maxWait) {
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

/// Runs this executable with \p args; returns its RESULT lines, each as
/// key=value pairs (empty on failure, with the reason in \p error).
std::vector<Result> runChild(const std::string &args, const fs::path &log,
                             std::string &error) {
  std::string cmd = shellQuote(fs::read_symlink("/proc/self/exe").string()) +
                    " " + args + " 2>>" + shellQuote(log.string());
  std::ofstream(log, std::ios::app) << "$ " << cmd << "\n";
  std::vector<Result> out;
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe) {
    error = "cannot start: " + cmd;
    return out;
  }
  char buf[4096];
  std::ofstream raw(log, std::ios::app);
  CpuClock before = CpuClock::now();
  while (std::fgets(buf, sizeof buf, pipe)) {
    std::string line = buf;
    raw << line;
    if (line.rfind("RESULT ", 0) != 0)
      continue;
    Result r;
    std::istringstream is(line.substr(7));
    std::string kv;
    while (is >> kv) {
      size_t eq = kv.find('=');
      if (eq != std::string::npos)
        r[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    out.push_back(r);
  }
  int status = pclose(pipe);
  double other = otherLoad(before, CpuClock::now());
  raw << "other_load=" << other << "\n";
  for (Result &r : out)
    r["other_load"] = std::to_string(other);
  if (status != 0 || out.empty()) {
    error = "child failed (exit status " +
            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
            "); see " + log.string();
    out.clear();
  }
  return out;
}

double num(const Result &r, const std::string &k) {
  auto it = r.find(k);
  return it == r.end() ? NAN : std::atof(it->second.c_str());
}

/// The median of a side's rounds by median step time (the lower middle of
/// an even count); empty when there were none.
std::vector<Result> medianRound(std::vector<Result> rounds) {
  std::vector<Result> out;
  if (rounds.empty())
    return out;
  std::sort(rounds.begin(), rounds.end(), [](const Result &a, const Result &b) {
    return num(a, "median_s") < num(b, "median_s");
  });
  out.push_back(rounds[(rounds.size() - 1) / 2]);
  return out;
}

struct Package {
  fs::path dir, pkg;
  std::string order; // the cMoLLM mixing order mixc chose
  std::string error;
};

/// Compiles \p c into WORK/SIZE/NAME/m.mixpkg unless an up-to-date package
/// of the same spec and shapes is there.
Package compile(const Options &o, const ModelConfig &c, bool bf16 = false) {
  Package p;
  p.dir = fs::path(o.work) / c.size /
          (c.name + (c.l == 1 ? "-l1" : "") + (bf16 ? "-bf16" : ""));
  p.pkg = p.dir / "m.mixpkg";
  fs::create_directories(p.dir);
  std::string spec = c.json();
  std::string cmd = shellQuote(o.mixc) + " " +
                    shellQuote((p.dir / "spec.json").string()) + " --batch " +
                    std::to_string(c.b) + " --seq " + std::to_string(c.s) +
                    (bf16 ? " --precision bf16" : "");
  fs::path manifest = p.pkg / "manifest.json";
  bool fresh = fs::exists(manifest) && readFile(p.dir / "spec.json") == spec &&
               readFile(p.dir / "cmd.txt") == cmd &&
               fs::last_write_time(manifest) > fs::last_write_time(o.mixc);
  if (!fresh) {
    std::ofstream(p.dir / "spec.json") << spec;
    std::cerr << "mix-bench: compiling " << c.size << "/" << c.name
              << (c.l == 1 ? " (1 layer)" : "") << (bf16 ? " (bf16)" : "")
              << "\n";
    std::string full = cmd + " -o " + shellQuote(p.pkg.string()) + " >" +
                       shellQuote((p.dir / "mixc.log").string()) + " 2>&1";
    auto t0 = Clock::now();
    if (std::system(full.c_str()) != 0) {
      p.error = "mixc failed; see " + (p.dir / "mixc.log").string();
      return p;
    }
    std::ofstream(p.dir / "compile_s.txt") << seconds(t0, Clock::now()) << "\n";
    std::ofstream(p.dir / "cmd.txt") << cmd;
  }
  if (c.arch == "cmollm") {
    // The mixing order of the proved model: "order apply_then_mix" etc.
    std::string emit = cmd + " --emit=proved 2>/dev/null";
    FILE *pipe = popen(emit.c_str(), "r");
    std::string text;
    char buf[4096];
    while (pipe && std::fgets(buf, sizeof buf, pipe))
      text += buf;
    if (pipe)
      pclose(pipe);
    std::smatch mt;
    std::set<std::string> orders;
    std::string::const_iterator it = text.begin();
    std::regex re("order ([a-z_]+)");
    while (std::regex_search(it, text.cend(), mt, re)) {
      orders.insert(mt[1]);
      it = mt.suffix().first;
    }
    for (auto &s : orders)
      p.order += (p.order.empty() ? "" : "+") + s;
    if (p.order.empty())
      p.order = c.streams == 1 ? "folded to dense" : "?";
  }
  return p;
}

struct Row {
  ModelConfig c;
  std::string order, error;
  Result compiled, torch, bf16, compiledBf16;
  bool checked = false;
  double relDiff = NAN, other = 0;
};

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

} // namespace

int main(int argc, char **argv) {
  Options o = parseOptions(argc, argv);
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
    if (!o.child.empty()) {
      std::cerr << "mix-bench: unknown child " << o.child << "\n";
      return 2;
    }
  } catch (const std::exception &e) {
    std::cerr << "mix-bench: " << e.what() << "\n";
    return 1;
  }

  // The driver.
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
    return 2;
  }
  o.mixc = fs::absolute(o.mixc).string();
  fs::create_directories(o.work);
  if (o.markdown.empty())
    o.markdown =
        (fs::path(o.work) / (o.quick ? "results-quick.md" : "results.md"))
            .string();
  fs::path log = fs::path(o.work) / "children.log";
  std::ofstream(log, std::ios::trunc);
  // libtorch's fp32 products go to OpenBLAS with this many threads; the
  // children read it when OpenBLAS initialises.
  setenv("OPENBLAS_NUM_THREADS", std::to_string(o.blasThreads).c_str(), 1);

  std::string command;
  for (auto &a : o.argv)
    command += (command.empty() ? "" : " ") + a;
  std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string loadStart = loadAverage();
  if (o.maxWait > 0)
    waitForIdle(o.maxOtherLoad, o.maxWait);
  double peak1 = measurePeak(1), peak2 = measurePeak(2);
  const double nominalPeak = 233.0;
  std::cerr << "mix-bench: measured FMA peak " << fmt("%.0f", peak2)
            << " GFLOP/s on 2 threads (" << fmt("%.0f", peak1)
            << " on 1); load average " << loadStart << "\n";

  std::regex only(o.only.empty() ? ".*" : o.only);
  std::regex bf16Re(o.bf16Only.empty() ? ".*" : o.bf16Only);
  std::vector<Row> rows;
  std::string modelArgs;
  auto stepArgs = [&](int steps, int warmup) {
    return " --steps " + std::to_string(steps) + " --warmup " +
           std::to_string(warmup);
  };
  auto threadArgs = " --torch-threads " + std::to_string(o.torchThreads) +
                    " --bf16-threads " + std::to_string(o.bf16Threads);
  // Runs the children one after the other, again (up to --retries times)
  // if other processes kept more than --max-other-load cores busy.
  auto measured = [&](const std::vector<std::string> &args, std::string &err,
                      double &other) {
    std::vector<std::vector<Result>> out;
    for (int attempt = 0;; ++attempt) {
      if (o.maxWait > 0)
        waitForIdle(o.maxOtherLoad, o.maxWait);
      out.clear();
      other = 0;
      for (const std::string &a : args) {
        out.push_back(runChild(a, log, err));
        if (!out.back().empty())
          other = std::max(other, num(out.back()[0], "other_load"));
      }
      if (other <= o.maxOtherLoad || attempt >= o.retries)
        return out;
      std::cerr << "mix-bench:   other processes kept " << fmt("%.2f", other)
                << " cores busy meanwhile: measuring again\n";
    }
  };
  // The compiled and the libtorch child alternately, --rounds times; each
  // side's median round by median step time, both empty if a round failed.
  // `other` is the most other load any round saw.
  auto alternated = [&](const std::string &compiledArgs,
                        const std::string &torchArgs, std::string &err,
                        double &other) {
    std::vector<Result> compiledRounds, torchRounds;
    other = 0;
    for (int round = 0; round < o.rounds; ++round) {
      double roundOther = 0;
      auto res = measured({compiledArgs, torchArgs}, err, roundOther);
      other = std::max(other, roundOther);
      if (res[0].empty() || res[1].empty())
        return std::make_pair(std::vector<Result>(), std::vector<Result>());
      compiledRounds.push_back(res[0][0]);
      torchRounds.push_back(res[1][0]);
    }
    return std::make_pair(medianRound(compiledRounds),
                          medianRound(torchRounds));
  };

  for (const std::string &size : o.sizes)
    for (const ModelConfig &c : mixbench::benchmarkModels(size)) {
      if (!std::regex_search(c.name, only))
        continue;
      Row row;
      row.c = c;
      Package p = compile(o, c);
      row.order = p.order;
      if (!p.error.empty()) {
        row.error = p.error;
        rows.push_back(row);
        continue;
      }
      std::string common = " --pkg " + shellQuote(p.pkg.string()) +
                           " --model " + shellQuote(c.encode());
      std::string err;
      std::cerr << "mix-bench: " << size << "/" << c.name
                << ": compiled, libtorch fp32";
      double other = 0;
      auto [rc, rt] = alternated(
          "--child compiled" + common + stepArgs(o.steps, o.warmup),
          "--child torch" + common + threadArgs + stepArgs(o.steps, o.warmup),
          err, other);
      row.other = std::max(row.other, other);
      if (!rc.empty())
        row.compiled = rc[0];
      if (!rt.empty())
        row.torch = rt[0];
      if (std::regex_search(c.name, bf16Re) && o.bf16Steps > 0) {
        std::cerr << ", libtorch bf16";
        auto rb = runChild("--child torch --bf16-autocast" + common +
                               threadArgs + stepArgs(o.bf16Steps, o.bf16Warmup),
                           log, err);
        if (!rb.empty())
          row.bf16 = rb[0];
        // The compiled step with bf16 products (mixc --precision bf16).
        Package pb = compile(o, c, /*bf16=*/true);
        std::cerr << ", compiled bf16";
        if (pb.error.empty()) {
          auto rcb =
              runChild("--child compiled --pkg " + shellQuote(pb.pkg.string()) +
                           " --model " + shellQuote(c.encode()) +
                           stepArgs(o.steps, o.warmup),
                       log, err);
          if (!rcb.empty())
            row.compiledBf16 = rcb[0];
        }
      }
      std::cerr << "\n";
      if (rc.empty() || rt.empty()) {
        row.error = err;
      } else {
        double a = num(row.compiled, "loss0"), b = num(row.torch, "loss0");
        row.relDiff = std::fabs(a - b) / std::fabs(b);
        row.checked = row.relDiff <= 1e-4;
        std::cerr << "mix-bench:   first loss: compiled " << fmt("%.7f", a)
                  << ", libtorch " << fmt("%.7f", b) << " (rel. diff "
                  << fmt("%.1e", row.relDiff) << ")"
                  << (row.bf16.empty()
                          ? ""
                          : ", libtorch bf16 " +
                                fmt("%.7f", num(row.bf16, "loss0")))
                  << (row.compiledBf16.empty()
                          ? ""
                          : ", compiled bf16 " +
                                fmt("%.7f", num(row.compiledBf16, "loss0")))
                  << "; step " << fmt("%.3f", num(row.compiled, "median_s"))
                  << " s vs " << fmt("%.3f", num(row.torch, "median_s"))
                  << " s\n";
        if (!row.checked)
          row.error = "loss check failed: compiled " + fmt("%.7g", a) +
                      ", libtorch " + fmt("%.7g", b);
      }
      rows.push_back(row);
    }

  // The mixture layer alone.
  struct LayerRow {
    std::string size, order;
    int64_t n;
    double compiled = NAN, torchFit = NAN, loop = NAN, stacked = NAN,
           gemm = NAN, flops = NAN;
  };
  std::vector<LayerRow> layerRows;
  std::map<std::string, double> sgemm, layerOther;
  std::vector<std::string> layerNotes;
  if (o.layer)
    for (const std::string &size : o.sizes) {
      // The compiled layer: 1-layer cMoLLM models at each N, grad only; the
      // part of the step time that grows with N (a least-squares line over
      // N) is the mixture layer (docs/performance.md). The same fit on the
      // libtorch model checks the method against the layer timed alone.
      std::vector<double> ns, tc, tt;
      std::map<int64_t, std::string> orders;
      for (int64_t n : o.layerStreams) {
        ModelConfig c;
        c.arch = "cmollm";
        c.streams = n;
        c.name = "cmollm-n" + std::to_string(n) + "-simple";
        c = mixbench::withSize(c, size);
        c.l = 1;
        Package p = compile(o, c);
        if (!p.error.empty()) {
          layerNotes.push_back(size + " N=" + std::to_string(n) + ": " +
                               p.error);
          continue;
        }
        orders[n] = p.order;
        std::string common = " --pkg " + shellQuote(p.pkg.string()) +
                             " --model " + shellQuote(c.encode()) +
                             " --grad-only" +
                             stepArgs(std::max(o.steps, 10), 2);
        std::string err;
        std::cerr << "mix-bench: layer " << size << " N=" << n
                  << ": 1-layer model, compiled and libtorch\n";
        // The fit over N magnifies one slow measurement, so the layer's
        // models take --rounds too.
        double other = 0;
        auto [rc, rt] =
            alternated("--child compiled" + common,
                       "--child torch" + common + threadArgs, err, other);
        layerOther[size] = std::max(layerOther[size], other);
        if (rc.empty() || rt.empty()) {
          layerNotes.push_back(size + " N=" + std::to_string(n) + ": " + err);
          continue;
        }
        ns.push_back(double(n));
        tc.push_back(num(rc[0], "median_s"));
        tt.push_back(num(rt[0], "median_s"));
      }
      auto intercept = [&](const std::vector<double> &y) -> double {
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
      };
      double ic = intercept(tc), it = intercept(tt);
      ModelConfig lc = mixbench::withSize(ModelConfig(), size);
      std::string err;
      std::cerr << "mix-bench: layer " << size
                << ": libtorch loop, stacked and OpenBLAS GEMM\n";
      std::string streams;
      for (int64_t n : o.layerStreams)
        streams += (streams.empty() ? "" : ",") + std::to_string(n);
      double other = 0;
      auto rl = measured({"--child layer --model " + shellQuote(lc.encode()) +
                          " --layer-streams " + streams + threadArgs +
                          stepArgs(o.steps, 2)},
                         err, other)[0];
      layerOther[size] = std::max(layerOther[size], other);
      if (rl.empty())
        layerNotes.push_back(size + ": layer child: " + err);
      for (const Result &r : rl) {
        if (r.at("kind") == "sgemm1024") {
          sgemm[size] = num(r, "gflops");
          continue;
        }
        LayerRow lr;
        lr.size = size;
        lr.n = int64_t(num(r, "n"));
        lr.loop = num(r, "loop_s");
        lr.stacked = num(r, "stacked_s");
        lr.gemm = num(r, "gemm_s");
        lr.flops = num(r, "flops");
        lr.order = orders.count(lr.n) ? orders[lr.n] : "?";
        for (size_t i = 0; i < ns.size(); ++i)
          if (int64_t(ns[i]) == lr.n) {
            lr.compiled = tc[i] - ic;
            lr.torchFit = tt[i] - it;
          }
        layerRows.push_back(lr);
      }
    }

  // The tables.
  std::ostringstream md;
  std::string loadEnd = loadAverage();
  md << "Measured " << date << " by `" << command << "`  \n"
     << "Machine: " << cpuModel() << "; fp32 FMA peak measured "
     << fmt("%.0f", peak2) << " GFLOP/s on 2 threads (" << fmt("%.0f", peak1)
     << " on 1), nominal " << fmt("%.0f", nominalPeak)
     << " GFLOP/s (% columns use the nominal peak)  \n"
     << "Load average at start " << loadStart << ", at end " << loadEnd
     << "; *other load*: cores kept busy by other processes while a row "
        "was measured (/proc/stat less the harness's children); rows over "
     << fmt("%.2f", o.maxOtherLoad) << " are measured again up to " << o.retries
     << " times  \n"
     << "libtorch " << TORCH_VERSION << ": fp32 on OpenBLAS with "
     << o.blasThreads << " threads, intra-op threads " << o.torchThreads
     << "; bf16 autocast with intra-op threads " << o.bf16Threads << ". "
     << "Compiled: mixc's package through mixrt::CompiledModel (@grad + "
     << "@adamw). Median of " << o.steps << " timed steps after " << o.warmup
     << " warm-up (bf16: " << o.bf16Steps << " after " << o.bf16Warmup
     << ")"
     << (o.rounds > 1
             ? "; fp32 compiled and libtorch alternately " +
                   std::to_string(o.rounds) +
                   " times a row, each side's median round"
             : std::string())
     << ".\n\n";
  md << "### Training step (grad + AdamW)\n\n"
     << "| size | model | compiled tok/s | libtorch fp32 tok/s | compiled / "
        "libtorch | libtorch bf16 tok/s | compiled bf16 tok/s (/ libtorch "
        "bf16) | GFLOP/step | "
        "compiled GFLOP/s (% peak) | libtorch GFLOP/s (% peak) | peak MiB "
        "compiled / libtorch | first loss compiled / libtorch (rel. diff) | "
        "other load |\n"
     << "|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---:|\n";
  for (const Row &r : rows) {
    const ModelConfig &c = r.c;
    std::string name = c.name;
    if (!r.order.empty())
      name += " (" + r.order + ")";
    if (!r.error.empty() && !r.checked) {
      md << "| " << c.size << " | " << name << " | **not reported: " << r.error
         << "** | | | | | " << fmt("%.1f", c.trainFlopsPerStep() / 1e9)
         << " | | | | | |\n";
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
       << fmt("%.1e", r.relDiff) << ") | " << fmt("%.2f", r.other)
       << (r.other > o.maxOtherLoad ? " (busy)" : "") << " |\n";
  }

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

  if (o.layer) {
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
    for (const LayerRow &l : layerRows) {
      auto ms = [&](double s) {
        return std::isnan(s) ? std::string("–")
                             : fmt("%.1f", 1e3 * s) + " (" +
                                   fmt("%.2f", s / l.gemm) + ")";
      };
      md << "| " << l.size << " | " << l.n << " | " << ms(l.compiled) << " "
         << l.order << " | " << ms(l.loop) << " | " << ms(l.stacked) << " | "
         << fmt("%.1f", 1e3 * l.gemm) << " ("
         << fmt("%.0f", l.flops / l.gemm / 1e9) << ") | " << ms(l.torchFit)
         << " |\n";
    }
    for (auto &[size, g] : sgemm)
      md << "\nOpenBLAS sgemm 1024^3 (" << size << " run): " << fmt("%.0f", g)
         << " GFLOP/s.";
    for (auto &[size, l] : layerOther)
      md << "\nOther load during the " << size << " layer runs: at most "
         << fmt("%.2f", l) << " cores" << (l > o.maxOtherLoad ? " (busy)" : "")
         << ".";
    md << "\n";
    for (auto &n : layerNotes)
      md << "\nnote: " << n;
  }
  md << "\n";
  std::cout << md.str();
  std::ofstream(o.markdown) << md.str();
  std::cerr << "mix-bench: tables written to " << o.markdown << "\n";
  bool allChecked = true;
  for (const Row &r : rows)
    allChecked = allChecked && r.checked;
  return allChecked ? 0 : 1;
}
