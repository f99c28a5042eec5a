//===- ChildTorch.cpp - The libtorch side of a row ------------------------===//
//
// The same model in libtorch (BenchModel.cpp), fp32 or under CPU autocast
// to bfloat16, with clip_grad_norm_ and torch::optim::AdamW.
//
//===----------------------------------------------------------------------===//

#include "BenchInputs.h"
#include "BenchModel.h"
#include "BenchSupport.h"
#include "Children.h"

#include "mixrt/Manifest.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <dlfcn.h>
#include <iostream>
#include <map>

using mixbench::ModelConfig;
using torch::Tensor;
using namespace mixbench;

bool mixbench::reportBlas() {
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

void mixbench::setBlasThreads(int threads) {
  using SetFn = void (*)(int);
  if (auto set = (SetFn)dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))
    set(threads);
}

namespace {
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
} // namespace

int mixbench::childTorch(const Options &o) {
  torch::set_num_threads(o.bf16 ? o.bf16Threads.front()
                                : o.torchThreads.front());
  setBlasThreads(o.blasThreads.front());
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
