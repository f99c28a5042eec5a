//===- DecodeTest.cpp - The decode step against the whole forward ---------===//
//
// A package's @decode advances each sequence one position a call, with
// the keys and values of the earlier positions (and a context gate's
// running sum) in its state; @prefill does the same for a chunk of
// positions. Fed a batch from position 0, two chunks through @prefill and
// the rest one position at a time, their logits must be those the whole
// forward (@logits) computes at every position, for every architecture and
// gating, on the CPU and on the CUDA emulator; and sampling through either
// gives the same tokens.
//
//===----------------------------------------------------------------------===//

#include "CompileModel.h"
#include "Reference.h"
#include "TestSupport.h"

#include "mixrt/CompiledModel.h"
#include "mixrt/Manifest.h"
#include "mixrt/Train.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using mixrt::CompiledModel;
using mixrt::Manifest;
using mixtest::Config;

namespace {

class Decode : public mixtest::ModelTest {};

/// The largest |decode - full| over every logit of every position, over the
/// largest |full|: both are float32 computations of the same function in
/// different orders (products of one row against products of the whole
/// batch, the cached attention's masked softmax against the fused kernel).
double decodeDeviation(const Config &c) {
  Manifest manifest = mixtest::compileModel(c);
  EXPECT_TRUE(manifest.decode.has_value()) << "no entries.decode";
  if (!manifest.decode)
    return INFINITY;
  EXPECT_EQ(manifest.decode->batch, c.batch);
  EXPECT_EQ(manifest.decode->positions, c.seq);
  CompiledModel model(manifest);
  mixtest::Float32Params p =
      mixtest::toFloat32(mixtest::randomParams(manifest, 1), manifest);
  mixtest::Batch batch = mixtest::randomBatch(c);
  torch::Tensor tok = batch.tok.to(torch::kInt32).contiguous();
  const int32_t *tokens = tok.data_ptr<int32_t>();
  int64_t b = c.batch, s = c.seq, v = c.v;
  std::vector<float> full(size_t(b * s * v));
  model.logits(p.ptrs, tokens, full.data());

  // The state of position 0: zeros; afterwards only the decode step
  // writes it.
  std::vector<std::vector<float>> state;
  std::vector<float *> ptrs;
  for (const Manifest::Decode::State &st : manifest.decode->state) {
    state.emplace_back(st.numElements, 0.0f);
    ptrs.push_back(state.back().data());
  }
  // The first two chunks through the prefill step (C positions a call),
  // the rest a position a call.
  int64_t chunk = manifest.decode->prefillChunk;
  EXPECT_GT(chunk, 1) << "no prefill step";
  int64_t prefilled =
      chunk > 1 ? std::min<int64_t>(2 * chunk, s) / chunk * chunk : 0;
  std::vector<float> step(size_t(b * std::max<int64_t>(chunk, 1) * v));
  std::vector<int32_t> column(size_t(b * std::max<int64_t>(chunk, 1)));
  double worst = 0, scale = 0;
  for (int64_t pos = 0; pos < s;) {
    int64_t len = pos < prefilled ? chunk : 1;
    for (int64_t r = 0; r < b; ++r)
      for (int64_t i = 0; i < len; ++i)
        column[size_t(r * len + i)] = tokens[r * s + pos + i];
    if (len > 1)
      model.prefill(p.ptrs, column.data(), int32_t(pos), ptrs, step.data());
    else
      model.decode(p.ptrs, column.data(), int32_t(pos), ptrs, step.data());
    for (int64_t r = 0; r < b; ++r)
      for (int64_t q = 0; q < len; ++q)
        for (int64_t i = 0; i < v; ++i) {
          float want = full[size_t((r * s + pos + q) * v + i)];
          float got = step[size_t((r * len + q) * v + i)];
          EXPECT_TRUE(std::isfinite(got))
              << "position " << pos + q << " row " << r;
          worst = std::max(worst, double(std::fabs(got - want)));
          scale = std::max(scale, double(std::fabs(want)));
        }
    pos += len;
  }
  double deviation = worst / std::max(scale, 1e-30);
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", deviation);
  ::testing::Test::RecordProperty("deviation", text);
  return deviation;
}

/// float32: products of d = 12 terms and softmaxes over at most 16
/// positions, a few layers deep, in different orders, round to a few ulps
/// of the logits' scale (measured: below 1e-6).
TEST_P(Decode, LogitsMatchTheWholeForward) {
  EXPECT_LT(decodeDeviation(GetParam()), 1e-5);
}

/// The same through the CUDA emulator (mixc --target cuda --emulate): the
/// decode step's kernels read the position on the device. Products round
/// their operands to TF32 (2^-11 relative) on both sides, but not the same
/// operands the same way (one row's products against the batch's, the
/// decode step's attention products against the flash attention kernel's
/// tiles): a few TF32 roundings of the logits' scale (measured 4e-4 to
/// 1e-3 of it, about two roundings); the bound allows eight.
class EmulatedDecode : public mixtest::ModelTest {};

TEST_P(EmulatedDecode, LogitsMatchTheWholeForward) {
  EXPECT_LT(decodeDeviation(GetParam()), 8 * 0x1p-11);
}

/// What a test samples: three continuations (a group of the decode batch
/// of two, then part of one) of a prompt, as long as the package's
/// sequence.
std::vector<std::vector<mixrt::TokenId>>
sample(const Config &c, mixrt::GenerateOptions::Method method) {
  Manifest manifest = mixtest::compileModel(c);
  CompiledModel model(manifest);
  mixtest::Float32Params p =
      mixtest::toFloat32(mixtest::randomParams(manifest, 2), manifest);
  std::vector<mixrt::TokenId> prompt{1, 5, 2};
  mixrt::GenerateOptions o;
  o.tokens = c.seq - int64_t(prompt.size());
  o.temperature = 1.0;
  o.topK = 0;
  o.seed = 7;
  o.continuations = c.batch + 1;
  o.method = method;
  return mixrt::generate(model, manifest, p.ptrs, prompt, o);
}

/// Sampling with the same seed through the decode step and through the
/// whole forward gives the same tokens, for a prompt and continuation that
/// fit the package's sequence (where the whole forward sees every token).
TEST_P(Decode, SamplesMatchTheWholeForward) {
  using Method = mixrt::GenerateOptions::Method;
  std::vector<std::vector<mixrt::TokenId>> cached =
      sample(GetParam(), Method::Cache);
  ASSERT_EQ(cached.size(), size_t(GetParam().batch + 1));
  EXPECT_EQ(cached, sample(GetParam(), Method::Full));
  // Different seeds give different continuations.
  EXPECT_NE(cached[0], cached[1]);
}

/// Through the emulator, generate keeps the parameters and the decode
/// state in device memory across the calls; with MIXRT_CUDA_RESIDENT=0
/// every call copies them there and back. The kernels are the same, so
/// the tokens must be too, bit for bit (a stale host copy holds NaNs in
/// the emulator: a missed upload or a state read back wrongly would change
/// them). Against the whole forward the emulated products round
/// differently (TF32), so that comparison is the logits' above.
TEST_P(EmulatedDecode, SamplesTheSameWithTheStateOnTheDevice) {
  using Method = mixrt::GenerateOptions::Method;
  std::vector<std::vector<mixrt::TokenId>> resident =
      sample(GetParam(), Method::Cache);
  ::setenv("MIXRT_CUDA_RESIDENT", "0", 1);
  std::vector<std::vector<mixrt::TokenId>> copied =
      sample(GetParam(), Method::Cache);
  ::unsetenv("MIXRT_CUDA_RESIDENT");
  ASSERT_EQ(resident.size(), size_t(GetParam().batch + 1));
  EXPECT_EQ(resident, copied);
}

/// Every architecture and gating, a decode batch of two sequences of 16
/// positions, the package's whole n_positions, and a prefill chunk of 3
/// (the samplers' prompt is one chunk).
std::vector<Config> configs() {
  Config dense;
  dense.name = "dense";
  dense.seq = 16;
  dense.mixcFlags = "--decode-batch 2 --prefill-chunk 3";
  std::vector<Config> out{dense};
  for (const char *gating :
       {"simple", "multi_head", "context_aware", "adaptive"}) {
    Config cm = dense;
    cm.arch = "cmollm";
    cm.gating = gating;
    cm.n = 3;
    cm.gateHeads = std::string(gating) == "multi_head" ? 4 : 1;
    cm.name = std::string("cmollm_") + gating;
    out.push_back(cm);
  }
  Config ps = dense;
  ps.arch = "parascale";
  ps.p = 2;
  ps.prefix = 3;
  ps.name = "parascale_p2";
  out.push_back(ps);
  Config au = dense;
  au.arch = "altup";
  au.k = 2;
  au.l = 3;
  au.name = "altup_k2";
  out.push_back(au);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Models, Decode, ::testing::ValuesIn(configs()),
                         [](const auto &info) { return info.param.name; });

/// Dense, the two gatings with state beyond the caches' (context_aware's
/// running sum) or none (multi_head), ParaScale's prefixes and AltUp.
std::vector<Config> emulatedConfigs() {
  std::vector<Config> out;
  for (Config c : configs()) {
    if (c.name == "cmollm_simple" || c.name == "cmollm_adaptive")
      continue;
    c.mixcFlags += " --target cuda --emulate";
    c.tf32Reference = true;
    out.push_back(c);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Models, EmulatedDecode,
                         ::testing::ValuesIn(emulatedConfigs()),
                         [](const auto &info) { return info.param.name; });

} // namespace
