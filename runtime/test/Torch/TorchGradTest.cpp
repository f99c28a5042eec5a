//===- TorchGradTest.cpp - Compiled gradients against libtorch autograd ---===//
//
// Compiles small models with mixc, runs their gradient and AdamW entry
// points, and compares them with the same models written in libtorch from
// SPEC.md (float64 autograd, torch::optim::AdamW).
//
//===----------------------------------------------------------------------===//

#include "mixrt/CompiledModel.h"
#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

using mixrt::CompiledModel;
using mixrt::LossValues;
using mixrt::Manifest;
using mixrt::ParamInfo;
using torch::Tensor;
namespace F = torch::nn::functional;

namespace {

struct Config {
  std::string name, arch = "dense", gating = "simple";
  int64_t v = 37, l = 2, d = 12, h = 3, f = 20, n = 1, gateHeads = 1;
  int64_t batch = 2, seq = 5;

  std::string json() const {
    std::string s =
        "{\"arch\": \"" + arch + "\", \"vocab_size\": " + std::to_string(v) +
        ", \"n_positions\": 16, " + "\"n_layer\": " + std::to_string(l) +
        ", \"d_model\": " + std::to_string(d) +
        ", \"n_head\": " + std::to_string(h) +
        ", \"d_ff\": " + std::to_string(f);
    if (arch == "cmollm")
      s += ", \"cmollm\": {\"streams\": " + std::to_string(n) +
           ", \"gating\": \"" + gating +
           "\", \"gate_heads\": " + std::to_string(gateHeads) + "}";
    return s + "}";
  }
};

using Params = std::map<std::string, Tensor>;

Tensor layerNorm(const Tensor &x, const Params &p, const std::string &name) {
  Tensor mu = x.mean(-1, true);
  Tensor var = (x - mu).pow(2).mean(-1, true);
  return (x - mu) / torch::sqrt(var + 1e-5) * p.at(name + ".weight") +
         p.at(name + ".bias");
}

Tensor gpt2Gelu(const Tensor &u) {
  return 0.5 * u *
         (1 + torch::tanh(std::sqrt(2.0 / M_PI) * (u + 0.044715 * u.pow(3))));
}

Tensor linear(const Tensor &x, const Params &p, const std::string &name) {
  return torch::matmul(x, p.at(name + ".weight").t()) + p.at(name + ".bias");
}

/// SPEC §2-3 for dense and cMoLLM (simple and multi_head gates).
std::tuple<Tensor, Tensor, Tensor> forward(const Params &p, const Tensor &tok,
                                           const Tensor &tgt, const Config &c) {
  int64_t b = tok.size(0), s = tok.size(1), dh = c.d / c.h;
  Tensor x =
      p.at("wte.weight").index_select(0, tok.flatten()).view({b, s, c.d}) +
      p.at("wpe.weight").slice(0, 0, s);
  std::vector<Tensor> auxes;
  for (int64_t l = 0; l < c.l; ++l) {
    std::string pre = "h." + std::to_string(l) + ".";
    Tensor a = layerNorm(x, p, pre + "ln_1");
    auto qkv = linear(a, p, pre + "attn.c_attn").split(c.d, -1);
    auto heads = [&](const Tensor &t) {
      return t.view({b, s, c.h, dh}).transpose(1, 2);
    };
    Tensor att = torch::matmul(heads(qkv[0]), heads(qkv[1]).transpose(-1, -2)) /
                 std::sqrt(double(dh));
    Tensor mask = torch::ones({s, s}, torch::kBool).triu(1);
    att = att.masked_fill(mask, -INFINITY).softmax(-1);
    Tensor o =
        torch::matmul(att, heads(qkv[2])).transpose(1, 2).reshape({b, s, c.d});
    x = x + linear(o, p, pre + "attn.c_proj");
    Tensor m = layerNorm(x, p, pre + "ln_2");
    Tensor y;
    if (c.arch == "dense") {
      y = linear(gpt2Gelu(linear(m, p, pre + "mlp.c_fc")), p,
                 pre + "mlp.c_proj");
    } else {
      Tensor k = p.at(pre + "mlp.kernels"), kb = p.at(pre + "mlp.kernel_bias");
      Tensor outs = torch::einsum("bsd,kfd->bskf", {m, k}) + kb; // MoE form
      Tensor u, pk;
      if (c.gating == "multi_head") {
        int64_t hh = c.gateHeads;
        Tensor mh = m.view({b, s, hh, c.d / hh});
        Tensor g = (torch::einsum("bshe,hne->bshn",
                                  {mh, p.at(pre + "mlp.gate.weight")}) +
                    p.at(pre + "mlp.gate.bias"))
                       .softmax(-1);
        u = torch::einsum("bshn,bsnhc->bshc",
                          {g, outs.view({b, s, c.n, hh, c.f / hh})})
                .reshape({b, s, c.f});
        pk = g.mean({1, 2});
      } else {
        Tensor g = linear(m, p, pre + "mlp.gate").softmax(-1);
        u = torch::einsum("bsn,bsnf->bsf", {g, outs});
        pk = g.mean(1);
      }
      y = linear(gpt2Gelu(u), p, pre + "mlp.c_proj");
      auxes.push_back((0.01 * double(c.n) * pk.pow(2).sum(-1)).mean());
    }
    x = x + y;
  }
  Tensor z = layerNorm(x, p, "ln_f");
  Tensor logits = torch::matmul(z, p.at("wte.weight").t());
  Tensor ce = F::cross_entropy(logits.view({-1, c.v}), tgt.flatten());
  Tensor aux = auxes.empty() ? torch::zeros({}, torch::kFloat64)
                             : torch::stack(auxes).mean();
  return {ce + aux, ce, aux};
}

double relError(const float *got, const Tensor &ref) {
  Tensor r = ref.to(torch::kFloat64).contiguous().flatten();
  Tensor g =
      torch::from_blob(const_cast<float *>(got), {r.numel()}, torch::kFloat32)
          .to(torch::kFloat64);
  double n = r.norm().item<double>();
  return (g - r).norm().item<double>() / (n > 0 ? n : 1.0);
}

class TorchGrad : public ::testing::TestWithParam<Config> {
protected:
  /// Compiles `c` with mixc into a package under a temporary directory,
  /// once per configuration (both tests of a model share the package).
  Manifest compile(const Config &c) {
    static std::map<std::string, std::string> compiled;
    if (auto it = compiled.find(c.name); it != compiled.end())
      return mixrt::readManifest(it->second);
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() /
        ("mix-torch-" + c.name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "m.json") << c.json();
    const char *mixc = std::getenv("MIXC");
    std::string cmd =
        std::string(mixc ? mixc : "mixc") + " " + (dir / "m.json").string() +
        " --batch " + std::to_string(c.batch) + " --seq " +
        std::to_string(c.seq) + " -o " + (dir / "m.mixpkg").string();
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    compiled[c.name] = (dir / "m.mixpkg").string();
    return mixrt::readManifest(compiled[c.name]);
  }
};

TEST_P(TorchGrad, LossAndEveryGradient) {
  const Config &c = GetParam();
  Manifest manifest = compile(c);
  CompiledModel model(manifest);
  torch::manual_seed(0);
  Params p64;
  std::vector<Tensor> p32;
  std::vector<const float *> ptrs;
  for (const ParamInfo &info : manifest.params) {
    Tensor t = torch::randn(info.shape, torch::kFloat64) * 0.2;
    if (info.name.find("ln_") != std::string::npos &&
        info.name.find(".weight") != std::string::npos)
      t = t + 1;
    Tensor f = t.to(torch::kFloat32).contiguous();
    p32.push_back(f);
    ptrs.push_back(f.data_ptr<float>());
    p64[info.name] = f.to(torch::kFloat64).requires_grad_(true);
  }
  Tensor tok = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  Tensor tgt = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  auto [loss, ce, aux] = forward(p64, tok, tgt, c);
  loss.backward();

  std::vector<int32_t> t32(tok.data_ptr<int64_t>(),
                           tok.data_ptr<int64_t>() + tok.numel());
  std::vector<int32_t> g32(tgt.data_ptr<int64_t>(),
                           tgt.data_ptr<int64_t>() + tgt.numel());
  std::vector<std::vector<float>> grads;
  std::vector<float *> gptrs;
  for (const ParamInfo &info : manifest.params)
    grads.emplace_back(mixrt::getNumElements(info.shape));
  for (auto &g : grads)
    gptrs.push_back(g.data());
  LossValues got = model.grad(ptrs, t32.data(), g32.data(), gptrs);

  // float32 against float64: the sums here run over at most a few hundred
  // terms of size O(1), so relative errors stay near 1e-6; 1e-4 for the
  // loss terms and 1e-4 for gradients leave room without hiding a wrong
  // formula (those are off by O(1)).
  EXPECT_NEAR(got.loss, loss.item<double>(), 1e-4 * loss.item<double>());
  EXPECT_NEAR(got.ce, ce.item<double>(), 1e-4 * ce.item<double>());
  EXPECT_NEAR(got.aux, aux.item<double>(), 1e-4 * (aux.item<double>() + 1e-6));
  for (size_t i = 0; i < manifest.params.size(); ++i)
    EXPECT_LT(relError(grads[i].data(), p64[manifest.params[i].name].grad()),
              1e-4)
        << manifest.params[i].name;
}

/// One compiled AdamW step (with clipping) against torch::optim::AdamW after
/// torch::nn::utils::clip_grad_norm_, decay on tensors of rank >= 2 only.
TEST_P(TorchGrad, AdamWStep) {
  const Config &c = GetParam();
  Manifest manifest = compile(c);
  CompiledModel model(manifest);
  torch::manual_seed(1);
  size_t n = manifest.params.size();
  std::vector<Tensor> params, grads, m, v, outP, outM, outV;
  for (const ParamInfo &info : manifest.params) {
    params.push_back(torch::randn(info.shape));
    grads.push_back(torch::randn(info.shape) * 0.5);
    m.push_back(torch::zeros(info.shape));
    v.push_back(torch::zeros(info.shape));
    outP.push_back(torch::empty(info.shape));
    outM.push_back(torch::empty(info.shape));
    outV.push_back(torch::empty(info.shape));
  }
  const double lr = 3e-3;
  float hyper[3] = {float(lr), float(1 - 0.9), float(1 - 0.95)};
  float norm = 0;
  std::vector<void *> args;
  for (auto *group : {&params, &grads, &m, &v})
    for (Tensor &t : *group)
      args.push_back(t.data_ptr());
  args.push_back(hyper);
  for (auto *group : {&outP, &outM, &outV})
    for (Tensor &t : *group)
      args.push_back(t.data_ptr());
  args.push_back(&norm);
  model.adamw(args.data());

  std::vector<Tensor> decay, noDecay, ref;
  for (size_t i = 0; i < n; ++i) {
    Tensor t = params[i].clone().requires_grad_(true);
    t.mutable_grad() = grads[i].clone();
    (params[i].dim() >= 2 ? decay : noDecay).push_back(t);
    ref.push_back(t);
  }
  double total = torch::nn::utils::clip_grad_norm_(ref, 1.0);
  torch::optim::AdamW opt(
      {torch::optim::OptimizerParamGroup(
           decay, std::make_unique<torch::optim::AdamWOptions>(
                      torch::optim::AdamWOptions(lr)
                          .betas({0.9, 0.95})
                          .eps(1e-8)
                          .weight_decay(0.1))),
       torch::optim::OptimizerParamGroup(
           noDecay, std::make_unique<torch::optim::AdamWOptions>(
                        torch::optim::AdamWOptions(lr)
                            .betas({0.9, 0.95})
                            .eps(1e-8)
                            .weight_decay(0.0)))},
      torch::optim::AdamWOptions(lr));
  opt.step();
  EXPECT_NEAR(norm, total, 1e-4 * total);
  for (size_t i = 0; i < n; ++i) {
    // One step moves every element by about lr; compare the update itself.
    Tensor want = ref[i].detach() - params[i];
    Tensor got = outP[i] - params[i];
    double err = (got - want).abs().max().item<double>();
    EXPECT_LT(err, 1e-3 * lr) << manifest.params[i].name;
  }
}

std::vector<Config> configs() {
  std::vector<Config> out;
  Config dense;
  dense.name = "dense";
  out.push_back(dense);
  Config s1 = dense;
  s1.name = "dense_s1";
  s1.seq = 1;
  s1.batch = 3;
  out.push_back(s1);
  for (int64_t n : {1, 3, 8}) {
    Config cm = dense;
    cm.arch = "cmollm";
    cm.n = n;
    cm.name = "cmollm_n" + std::to_string(n);
    out.push_back(cm);
  }
  Config mh = dense;
  mh.arch = "cmollm";
  mh.gating = "multi_head";
  mh.n = 3;
  mh.gateHeads = 4;
  mh.name = "cmollm_multi_head";
  out.push_back(mh);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Models, TorchGrad, ::testing::ValuesIn(configs()),
                         [](const auto &info) { return info.param.name; });

} // namespace
