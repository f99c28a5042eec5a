//===- Generate.cpp - Sampling text from a compiled package ---------------===//
//
// Autoregressive sampling with temperature and top-k, through the compiled
// decode step and its key-value cache (one position a call), or through
// the training-shaped @logits over a sliding window of the package's
// sequence length (packages without a decode step, and for comparison).
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "mixrt/Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mixrt;

namespace {
/// Draws a token from a row of logits: greedily, or by temperature among
/// the top k, with a SplitMix64 generator of its own.
class Sampler {
public:
  Sampler(const GenerateOptions &o, uint64_t seed) : o(o), state(seed) {}

  TokenId operator()(const float *row, int64_t vocab) {
    order.resize(size_t(vocab));
    std::iota(order.begin(), order.end(), 0);
    int64_t k = o.topK > 0 ? std::min<int64_t>(o.topK, vocab) : vocab;
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int a, int c) { return row[a] > row[c]; });
    if (o.temperature == 0)
      return TokenId(order[0]);
    std::vector<double> p(static_cast<size_t>(k));
    double sum = 0;
    for (int64_t i = 0; i < k; ++i)
      sum += p[i] = std::exp((row[order[i]] - row[order[0]]) / o.temperature);
    double r = uniform() * sum;
    for (int64_t i = 0; i < k; ++i) {
      r -= p[i];
      if (r <= 0)
        return TokenId(order[i]);
    }
    return TokenId(order[k - 1]);
  }

private:
  double uniform() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double(z >> 11) + 0.5) * 0x1p-53;
  }

  const GenerateOptions &o;
  uint64_t state;
  std::vector<int> order;
};

/// One continuation at a time through @logits, whose causal attention
/// makes the padding after the last `seq` tokens irrelevant.
std::vector<TokenId> sampleFull(const CompiledModel &model,
                                const Manifest &manifest,
                                const std::vector<const float *> &params,
                                std::vector<TokenId> context,
                                const GenerateOptions &o, Sampler &sample) {
  int64_t b = manifest.batch, seq = manifest.seq, v = manifest.vocabSize;
  std::vector<int32_t> tokens(size_t(b * seq));
  std::vector<float> logits(size_t(b * seq * v));
  std::vector<TokenId> out;
  for (int64_t n = 0; n < o.tokens; ++n) {
    size_t len = std::min<size_t>(context.size(), size_t(seq));
    std::fill(tokens.begin(), tokens.end(), 0);
    for (size_t i = 0; i < len; ++i)
      tokens[i] = int32_t(context[context.size() - len + i]);
    model.logits(params, tokens.data(), logits.data());
    TokenId next = sample(&logits[(len - 1) * size_t(v)], v);
    context.push_back(next);
    out.push_back(next);
  }
  return out;
}

/// Up to the decode batch's continuations at once, all at the same
/// position, in \p state (the decode state's buffers, allocated once for
/// every group); rows beyond \p samplers.size() repeat row 0 and are
/// dropped.
std::vector<std::vector<TokenId>>
sampleCached(CompiledModel &model, const Manifest &manifest,
             const std::vector<const float *> &params,
             const std::vector<TokenId> &prompt, const GenerateOptions &o,
             std::vector<Sampler> &samplers,
             std::vector<std::vector<float>> &state) {
  const Manifest::Decode &d = *manifest.decode;
  int64_t rows = d.batch, v = manifest.vocabSize, window = d.positions;
  size_t used = samplers.size();
  std::vector<float *> statePtrs;
  for (std::vector<float> &s : state)
    statePtrs.push_back(s.data());
  std::vector<float> logits(size_t(rows * v));
  std::vector<int32_t> tokens(static_cast<size_t>(rows));
  std::vector<int32_t> chunkTokens(size_t(rows * d.prefillChunk));
  std::vector<float> chunkLogits(size_t(rows * d.prefillChunk * v));
  std::vector<std::vector<TokenId>> context(used, prompt), out(used);
  int32_t position = 0;
  // Feeds the last \p count tokens of each context from position 0, with
  // the state cleared: the prompt, and the context again when it is full.
  auto refill = [&](size_t count) {
    for (std::vector<float> &s : state)
      std::fill(s.begin(), s.end(), 0.0f);
    // A cuda package keeps the state on the device between calls (the
    // host's zeros uploaded when the first call reads them).
    model.keepOnDevice(state, /*upload=*/false);
    size_t len = context[0].size(), first = len - count;
    auto token = [&](int64_t r, size_t i) {
      return int32_t(context[size_t(r) < used ? r : 0][first + i]);
    };
    // Whole chunks through the prefill step, the rest a position a call;
    // the logits of the last position fed are the ones sampled from.
    size_t chunk = size_t(d.prefillChunk);
    position = 0;
    while (chunk > 1 && size_t(position) + chunk <= count) {
      for (int64_t r = 0; r < rows; ++r)
        for (size_t i = 0; i < chunk; ++i)
          chunkTokens[size_t(r) * chunk + i] = token(r, size_t(position) + i);
      model.prefill(params, chunkTokens.data(), position, statePtrs,
                    chunkLogits.data());
      position += int32_t(chunk);
      for (int64_t r = 0; r < rows; ++r)
        std::copy_n(&chunkLogits[(size_t(r) * chunk + chunk - 1) * size_t(v)],
                    size_t(v), &logits[size_t(r) * size_t(v)]);
    }
    for (; size_t(position) < count; ++position) {
      for (int64_t r = 0; r < rows; ++r)
        tokens[r] = token(r, size_t(position));
      model.decode(params, tokens.data(), position, statePtrs, logits.data());
    }
  };
  size_t half = size_t(std::max<int64_t>(window / 2, 1));
  refill(prompt.size() < size_t(window) ? prompt.size()
                                        : std::min(prompt.size(), half));
  for (int64_t n = 0; n < o.tokens; ++n) {
    for (size_t r = 0; r < used; ++r) {
      TokenId next = samplers[r](&logits[r * size_t(v)], v);
      context[r].push_back(next);
      out[r].push_back(next);
    }
    if (n + 1 == o.tokens)
      break;
    if (position == window) {
      refill(half);
      continue;
    }
    for (int64_t r = 0; r < rows; ++r)
      tokens[r] = int32_t(context[size_t(r) < used ? r : 0].back());
    model.decode(params, tokens.data(), position++, statePtrs, logits.data());
  }
  return out;
}
} // namespace

std::vector<std::vector<TokenId>>
mixrt::generate(CompiledModel &model, const Manifest &manifest,
                const std::vector<const float *> &given,
                const std::vector<TokenId> &context, const GenerateOptions &o) {
  if (context.empty())
    fail("generate needs a prompt of at least one token");
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
    fail("--temperature must be a non-negative number, got ", o.temperature);
  if (o.continuations < 1)
    fail("--batch must be at least 1, got ", o.continuations);
  // A cuda package reads the parameters at every call: they stay on the
  // device (copied here once, uploaded once), as the decode state does,
  // rather than crossing to it for every token.
  std::vector<const float *> params = given;
  std::vector<std::vector<float>> resident;
  struct Release {
    CompiledModel &model;
    ~Release() { model.releaseDeviceCopies(); }
  } release{model};
  if (model.keepsOnDevice()) {
    resident.reserve(given.size());
    for (size_t i = 0; i < given.size(); ++i) {
      size_t n = 1;
      for (int64_t d : manifest.params[i].shape)
        n *= size_t(d);
      resident.emplace_back(given[i], given[i] + n);
      params[i] = resident.back().data();
    }
    model.keepParametersOnDevice(resident, /*upload=*/true);
  }
  std::vector<std::vector<TokenId>> out;
  bool cached = o.method == GenerateOptions::Method::Cache && model.hasDecode();
  int64_t group = cached ? manifest.decode->batch : 1;
  std::vector<std::vector<float>> state;
  if (cached)
    for (const Manifest::Decode::State &s : manifest.decode->state)
      state.emplace_back(s.numElements);
  for (int64_t first = 0; first < o.continuations; first += group) {
    std::vector<Sampler> samplers;
    for (int64_t c = first; c < std::min(first + group, o.continuations); ++c)
      samplers.emplace_back(o, o.seed + uint64_t(c));
    if (!cached) {
      out.push_back(
          sampleFull(model, manifest, params, context, o, samplers[0]));
      continue;
    }
    for (std::vector<TokenId> &c :
         sampleCached(model, manifest, params, context, o, samplers, state))
      out.push_back(std::move(c));
  }
  return out;
}
