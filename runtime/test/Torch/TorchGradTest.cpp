//===- TorchGradTest.cpp - Compiled gradients against libtorch autograd ---===//
//
// Compiles small models of every architecture with mixc, runs their gradient
// and AdamW entry points, and compares them with the models of docs/models.md
// written in libtorch (Reference.cpp; float64 autograd, torch::optim::AdamW).
//
//===----------------------------------------------------------------------===//

#include "CompileModel.h"
#include "Reference.h"
#include "TestSupport.h"

#include "mixrt/CompiledModel.h"
#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using mixrt::CompiledModel;
using mixrt::LossValues;
using mixrt::Manifest;
using mixrt::ParamInfo;
using mixtest::Config;
using mixtest::Params;
using mixtest::relError;
using torch::Tensor;

namespace {

class TorchGrad : public mixtest::ModelTest {};

TEST_P(TorchGrad, LossAndEveryGradient) {
  const Config &c = GetParam();
  Manifest manifest = mixtest::compileModel(c);
  CompiledModel model(manifest);
  Params p64 = mixtest::randomParams(manifest, 0);
  mixtest::Float32Params p32 = mixtest::toFloat32(p64, manifest);
  for (const ParamInfo &info : manifest.params)
    p64[info.name].requires_grad_(true);
  mixtest::Batch batch = mixtest::randomBatch(c);
  auto [loss, ce, aux] = mixtest::referenceLoss(p64, batch.tok, batch.tgt, c);
  loss.backward();

  mixtest::CompiledGrad compiled =
      mixtest::runCompiledGrad(model, manifest, p32.ptrs, batch);
  const LossValues &got = compiled.loss;
  const std::vector<std::vector<float>> &grads = compiled.grads;

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

/// One compiled AdamW step against torch::optim::AdamW
/// (mixtest::expectAdamWStepMatchesTorch).
TEST_P(TorchGrad, AdamWStep) {
  Manifest manifest = mixtest::compileModel(GetParam());
  CompiledModel model(manifest);
  mixtest::expectAdamWStepMatchesTorch(model, manifest);
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
  // The stacked order (the CUDA target's choice for multi-head gates; on
  // the CPU only when asked for): all kernels in one product, the streams'
  // outputs mixed by the gate.
  Config stacked = dense;
  stacked.arch = "cmollm";
  stacked.n = 3;
  stacked.mixcFlags = "--mixing-order stack_then_mix";
  stacked.name = "cmollm_stack_then_mix";
  out.push_back(stacked);
  Config stackedHeads = stacked;
  stackedHeads.gating = "multi_head";
  stackedHeads.gateHeads = 4;
  stackedHeads.name = "cmollm_multi_head_stack_then_mix";
  out.push_back(stackedHeads);
  Config ctx = dense;
  ctx.arch = "cmollm";
  ctx.gating = "context_aware";
  ctx.n = 3;
  ctx.name = "cmollm_context_aware";
  out.push_back(ctx);
  Config ctx1 = ctx;
  ctx1.seq = 1;
  ctx1.n = 2;
  ctx1.name = "cmollm_context_aware_s1";
  out.push_back(ctx1);
  Config ad = ctx;
  ad.gating = "adaptive";
  ad.n = 4;
  ad.name = "cmollm_adaptive";
  out.push_back(ad);
  Config ad1 = ad;
  ad1.n = 1;
  ad1.name = "cmollm_adaptive_n1";
  out.push_back(ad1);
  for (int64_t p : {1, 2, 3}) {
    Config ps = dense;
    ps.arch = "parascale";
    ps.p = p;
    ps.prefix = p == 3 ? 3 : 2;
    ps.smoothing = p == 2 ? 0.1 : 0.01;
    ps.name = "parascale_p" + std::to_string(p);
    out.push_back(ps);
  }
  Config psOdd = dense;
  psOdd.arch = "parascale";
  psOdd.p = 2;
  psOdd.d = 10;
  psOdd.h = 5;
  psOdd.f = 14;
  psOdd.seq = 1;
  psOdd.name = "parascale_odd_s1";
  out.push_back(psOdd);
  for (int64_t k : {1, 2, 3}) {
    Config au = dense;
    au.arch = "altup";
    au.k = k;
    au.l = 3;
    au.name = "altup_k" + std::to_string(k);
    out.push_back(au);
  }
  Config same = dense;
  same.arch = "altup";
  same.k = 2;
  same.schedule = "same";
  same.name = "altup_same";
  out.push_back(same);
  Config big = mixtest::threadedSize(dense);
  big.name = "dense_threaded";
  out.push_back(big);
  Config bigMixture = big;
  bigMixture.arch = "cmollm";
  bigMixture.gating = "multi_head";
  bigMixture.n = 4;
  bigMixture.gateHeads = 4;
  bigMixture.name = "cmollm_multi_head_threaded";
  out.push_back(bigMixture);
  Config bigStreams = big;
  bigStreams.arch = "parascale";
  bigStreams.p = 2;
  bigStreams.prefix = 3;
  bigStreams.name = "parascale_threaded";
  out.push_back(bigStreams);
  Config bigAltUp = big;
  bigAltUp.arch = "altup";
  bigAltUp.k = 2;
  bigAltUp.name = "altup_threaded";
  out.push_back(bigAltUp);
  // Long enough that the fused attention's tiles of 64 keys and queries
  // come several to a row, with a ragged last one (200 = 3 x 64 + 8) and,
  // for ParaScale, prefixes of several tiles; and decomposed
  // (mixc --attention decomposed), long enough that the attention's
  // products skip their causal triangle in blocks of rows
  // (mix-causal-products; from 128 rows on) and, for ParaScale, the
  // prefix's offset diagonal.
  Config causal = dense;
  causal.l = 1;
  causal.d = 8;
  causal.h = 2;
  causal.f = 8;
  causal.seq = 200;
  causal.name = "dense_causal_blocks";
  out.push_back(causal);
  Config causalPrefix = causal;
  causalPrefix.arch = "parascale";
  causalPrefix.p = 2;
  causalPrefix.prefix = 5;
  causalPrefix.seq = 130;
  causalPrefix.batch = 1;
  causalPrefix.name = "parascale_causal_blocks";
  out.push_back(causalPrefix);
  Config longPrefix = causalPrefix;
  longPrefix.prefix = 70;
  longPrefix.seq = 100;
  longPrefix.batch = 2;
  longPrefix.name = "parascale_long_prefix";
  out.push_back(longPrefix);
  for (const Config &c : {causal, causalPrefix})
    out.push_back(mixtest::decomposedAttention(c));
  return out;
}

INSTANTIATE_TEST_SUITE_P(Models, TorchGrad, ::testing::ValuesIn(configs()),
                         [](const auto &info) { return info.param.name; });

} // namespace
