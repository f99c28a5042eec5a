//===- ReductionTest.cpp - Architectures that reduce to the dense model ---===//
//
// models.md notes where an architecture is exactly the dense GPT-2: cMoLLM with
// one stream (the gate is identically 1; kernels[0] plays c_fc) and AltUp
// with one block at its initial predict = 1, correct = 1 (y = xtil). Both
// sides here are compiled packages: the test checks that the compiler's
// reductions hold, on top of the libtorch comparison of each side.
//
//===----------------------------------------------------------------------===//

#include "CompileModel.h"

#include "mixrt/CompiledModel.h"

#include <gtest/gtest.h>

using mixrt::CompiledModel;
using mixrt::LossValues;
using mixrt::Manifest;
using mixtest::Config;
using mixtest::Params;
using torch::Tensor;

namespace {

struct Result {
  LossValues loss;
  std::map<std::string, Tensor> grads;
};

/// Runs the compiled gradient of `manifest` on `params` (by name).
Result runGrad(const Manifest &manifest, const Params &params,
               const Tensor &tokens, const Tensor &targets) {
  CompiledModel model(manifest);
  std::vector<Tensor> p32, g32;
  std::vector<const float *> ptrs;
  std::vector<float *> gptrs;
  for (const mixrt::ParamInfo &info : manifest.params) {
    p32.push_back(params.at(info.name).to(torch::kFloat32).contiguous());
    ptrs.push_back(p32.back().data_ptr<float>());
    g32.push_back(torch::zeros(info.shape, torch::kFloat32));
    gptrs.push_back(g32.back().data_ptr<float>());
  }
  Tensor t = tokens.to(torch::kInt32).contiguous();
  Tensor g = targets.to(torch::kInt32).contiguous();
  Result r;
  r.loss =
      model.grad(ptrs, t.data_ptr<int32_t>(), g.data_ptr<int32_t>(), gptrs);
  for (size_t i = 0; i < manifest.params.size(); ++i)
    r.grads[manifest.params[i].name] = g32[i];
  return r;
}

double relDiff(const Tensor &a, const Tensor &b) {
  double n = b.norm().item<double>();
  return (a - b).norm().item<double>() / (n > 0 ? n : 1.0);
}

/// Compiles `wide` and its dense counterpart, maps the parameters with
/// `toDense`, and checks that loss and every shared gradient agree.
void expectReducesToDense(Config wide,
                          const std::function<void(Params &)> &toDense,
                          const std::vector<std::string> &zeroGrads) {
  Config dense = wide;
  dense.arch = "dense";
  dense.name = wide.name + "_as_dense";
  Manifest wideManifest = mixtest::compileModel(wide);
  Manifest denseManifest = mixtest::compileModel(dense);
  Params params = mixtest::randomParams(wideManifest, 7);
  toDense(params); // Adds the dense names, pins what the reduction needs.
  const Params &denseParams = params;
  torch::manual_seed(3);
  Tensor tok = torch::randint(wide.v, {wide.batch, wide.seq}, torch::kInt64);
  Tensor tgt = torch::randint(wide.v, {wide.batch, wide.seq}, torch::kInt64);
  Result a = runGrad(wideManifest, params, tok, tgt);
  Result b = runGrad(denseManifest, denseParams, tok, tgt);
  // Two float32 programs of the same function that differ in the order of a
  // few operations: agreement to a few ulps of the O(1) loss.
  EXPECT_NEAR(a.loss.ce, b.loss.ce, 1e-6 * b.loss.ce);
  EXPECT_NEAR(a.loss.loss - a.loss.aux, b.loss.loss, 1e-6 * b.loss.loss);
  for (const mixrt::ParamInfo &info : denseManifest.params) {
    std::string name = info.name;
    if (!a.grads.count(name)) // c_fc: compared through the stream kernel.
      continue;
    EXPECT_LT(relDiff(a.grads[name], b.grads[name]), 1e-5) << name;
  }
  for (const std::string &name : zeroGrads)
    EXPECT_EQ(a.grads.at(name).abs().max().item<float>(), 0.0f) << name;
  for (int64_t l = 0; l < wide.l && wide.arch == "cmollm"; ++l) {
    std::string pre = "h." + std::to_string(l) + ".mlp.";
    EXPECT_LT(
        relDiff(a.grads[pre + "kernels"][0], b.grads[pre + "c_fc.weight"]),
        1e-5);
    EXPECT_LT(
        relDiff(a.grads[pre + "kernel_bias"][0], b.grads[pre + "c_fc.bias"]),
        1e-5);
  }
}

TEST(Reduction, CMoLLMWithOneStreamIsDense) {
  for (const char *gating : {"simple", "context_aware"}) {
    Config c;
    c.arch = "cmollm";
    c.gating = gating;
    c.n = 1;
    c.name = std::string("reduce_cmollm_") + gating;
    // A softmax over one stream is constant: nothing that feeds the gate
    // gets a gradient.
    std::vector<std::string> gateParams = {"gate.weight", "gate.bias"};
    if (c.gating == "context_aware")
      gateParams.insert(gateParams.end(),
                        {"ctx.fc1.weight", "ctx.fc1.bias", "ctx.fc2.weight",
                         "ctx.fc2.bias", "gate_ln.weight", "gate_ln.bias"});
    std::vector<std::string> zero;
    for (int64_t l = 0; l < c.l; ++l)
      for (const std::string &p : gateParams)
        zero.push_back("h." + std::to_string(l) + ".mlp." + p);
    expectReducesToDense(
        c,
        [&](Params &p) {
          for (int64_t l = 0; l < c.l; ++l) {
            std::string pre = "h." + std::to_string(l) + ".mlp.";
            p[pre + "c_fc.weight"] = p[pre + "kernels"][0];
            p[pre + "c_fc.bias"] = p[pre + "kernel_bias"][0];
          }
        },
        zero);
  }
}

TEST(Reduction, AltUpWithOneBlockIsDense) {
  for (const char *schedule : {"alternating", "same"}) {
    Config c;
    c.arch = "altup";
    c.k = 1;
    c.l = 3;
    c.schedule = schedule;
    c.name = std::string("reduce_altup_") + schedule;
    // At predict = 1 and correct = 1, y = xtil; the reduction holds there.
    expectReducesToDense(c,
                         [&](Params &p) {
                           for (int64_t l = 0; l < c.l; ++l) {
                             std::string pre =
                                 "h." + std::to_string(l) + ".altup.";
                             p[pre + "predict"].fill_(1.0);
                             p[pre + "correct"].fill_(1.0);
                           }
                         },
                         {});
  }
}

/// ParaScale keeps its learned prefixes with one stream, so it is not the
/// dense model; what must vanish is the aggregation: w = 1 exactly.
TEST(Reduction, ParaScaleWithOneStreamHasNoAggregation) {
  Config c;
  c.arch = "parascale";
  c.p = 1;
  c.name = "reduce_parascale";
  Manifest manifest = mixtest::compileModel(c);
  Params params = mixtest::randomParams(manifest, 5);
  torch::manual_seed(4);
  Tensor tok = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  Tensor tgt = torch::randint(c.v, {c.batch, c.seq}, torch::kInt64);
  Result r = runGrad(manifest, params, tok, tgt);
  for (const char *name :
       {"agg.fc1.weight", "agg.fc1.bias", "agg.fc2.weight", "agg.fc2.bias"})
    EXPECT_EQ(r.grads.at(name).abs().max().item<float>(), 0.0f) << name;
}

} // namespace
