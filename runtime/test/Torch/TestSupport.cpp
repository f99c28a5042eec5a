//===- TestSupport.cpp - What the libtorch comparisons share --------------===//
//
// Relative errors against float64 references, libtorch's thread count per
// configuration, one compiled gradient on a random batch, and one compiled
// AdamW step against torch::optim::AdamW.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "mixrt/Safetensors.h"

using mixrt::Manifest;
using mixrt::ParamInfo;
using torch::Tensor;

namespace mixtest {

double relError(const float *got, const Tensor &ref) {
  Tensor r = ref.to(torch::kFloat64).contiguous().flatten();
  Tensor g =
      torch::from_blob(const_cast<float *>(got), {r.numel()}, torch::kFloat32)
          .to(torch::kFloat64);
  double n = r.norm().item<double>();
  return (g - r).norm().item<double>() / (n > 0 ? n : 1.0);
}

void ModelTest::SetUp() {
  if (GetParam().threads > 0)
    at::set_num_threads(int(GetParam().threads));
}

void ModelTest::TearDown() {
  if (GetParam().threads > 0)
    at::set_num_threads(1);
}

Config threadedSize(Config c) {
  c.v = 256;
  c.d = 32;
  c.h = 4;
  c.f = 128;
  c.batch = 8;
  c.seq = 16;
  c.threads = 2;
  return c;
}

Config decomposedAttention(Config c) {
  c.mixcFlags = "--attention decomposed";
  c.fusedAttention = false;
  c.name += "_decomposed";
  return c;
}

Float32Params toFloat32(const Params &params, const Manifest &manifest) {
  Float32Params out;
  for (const ParamInfo &info : manifest.params) {
    out.tensors.push_back(
        params.at(info.name).to(torch::kFloat32).contiguous());
    out.ptrs.push_back(out.tensors.back().data_ptr<float>());
  }
  return out;
}

Batch randomBatch(const Config &c) {
  Batch b;
  b.tok = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  b.tgt = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  return b;
}

CompiledGrad runCompiledGrad(const mixrt::CompiledModel &model,
                             const Manifest &manifest,
                             const std::vector<const float *> &params,
                             const Batch &batch) {
  const Tensor &tok = batch.tok, &tgt = batch.tgt;
  std::vector<int32_t> t32(tok.data_ptr<int64_t>(),
                           tok.data_ptr<int64_t>() + tok.numel());
  std::vector<int32_t> g32(tgt.data_ptr<int64_t>(),
                           tgt.data_ptr<int64_t>() + tgt.numel());
  CompiledGrad out;
  std::vector<float *> gptrs;
  for (const ParamInfo &info : manifest.params)
    out.grads.emplace_back(mixrt::getNumElements(info.shape));
  for (auto &g : out.grads)
    gptrs.push_back(g.data());
  out.loss = model.grad(params, t32.data(), g32.data(), gptrs);
  return out;
}

void expectAdamWStepMatchesTorch(const mixrt::CompiledModel &model,
                                 const Manifest &manifest) {
  torch::manual_seed(1);
  size_t n = manifest.params.size();
  std::vector<Tensor> params, grads, m, v, before;
  for (const ParamInfo &info : manifest.params) {
    params.push_back(torch::randn(info.shape));
    grads.push_back(torch::randn(info.shape) * 0.5);
    m.push_back(torch::zeros(info.shape));
    v.push_back(torch::zeros(info.shape));
    before.push_back(params.back().clone());
  }
  const double lr = 3e-3;
  float hyper[3] = {float(lr), float(1 - 0.9), float(1 - 0.95)};
  auto ptrs = [](std::vector<Tensor> &ts) {
    std::vector<float *> out;
    for (Tensor &t : ts)
      out.push_back(t.data_ptr<float>());
    return out;
  };
  std::vector<const float *> gradPtrs;
  for (Tensor &g : grads)
    gradPtrs.push_back(g.data_ptr<float>());
  std::vector<Tensor> gradsBefore;
  for (Tensor &g : grads)
    gradsBefore.push_back(g.clone());
  // The update writes over params, m and v.
  float norm = model.adamw(ptrs(params), gradPtrs, ptrs(m), ptrs(v), hyper);

  std::vector<Tensor> decay, noDecay, ref;
  for (size_t i = 0; i < n; ++i) {
    Tensor t = before[i].clone().requires_grad_(true);
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
    Tensor want = ref[i].detach() - before[i];
    Tensor got = params[i] - before[i];
    double err = (got - want).abs().max().item<double>();
    EXPECT_LT(err, 1e-3 * lr) << manifest.params[i].name;
    // The moments, against torch.optim's state (after one step from zero,
    // m = (1 - beta1) g and v = (1 - beta2) g^2, g clipped).
    auto &state = static_cast<torch::optim::AdamWParamState &>(
        *opt.state().at(c10::guts::to_string(ref[i].unsafeGetTensorImpl())));
    EXPECT_LT((m[i] - state.exp_avg()).abs().max().item<double>(),
              1e-6 + 1e-5 * state.exp_avg().abs().max().item<double>())
        << manifest.params[i].name;
    EXPECT_LT((v[i] - state.exp_avg_sq()).abs().max().item<double>(),
              1e-9 + 1e-5 * state.exp_avg_sq().abs().max().item<double>())
        << manifest.params[i].name;
    // The gradients are read, never written.
    EXPECT_TRUE(torch::equal(grads[i], gradsBefore[i]))
        << manifest.params[i].name;
  }
}

} // namespace mixtest
