//===- Generate.cpp - Sampling text from a compiled package ---------------===//
//
// Autoregressive sampling with temperature and top-k through the compiled
// @logits entry point, over a sliding window of the package's sequence
// length.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Train.h"

#include "mixrt/Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mixrt;

std::vector<TokenId> mixrt::generate(const CompiledModel &model,
                                     const Manifest &manifest,
                                     const std::vector<const float *> &params,
                                     std::vector<TokenId> context,
                                     const GenerateOptions &o) {
  if (context.empty())
    fail("generate needs a prompt of at least one token");
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
    fail("--temperature must be a non-negative number, got ", o.temperature);
  int64_t b = manifest.batch, seq = manifest.seq, v = manifest.vocabSize;
  std::vector<int32_t> tokens(size_t(b * seq));
  std::vector<float> logits(size_t(b * seq * v));
  uint64_t state = o.seed;
  auto uniform = [&] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double(z >> 11) + 0.5) * 0x1p-53;
  };
  std::vector<TokenId> out;
  for (int64_t n = 0; n < o.tokens; ++n) {
    // The last `seq` tokens; causal attention makes the padding after them
    // irrelevant to the position we read.
    size_t len = std::min<size_t>(context.size(), size_t(seq));
    std::fill(tokens.begin(), tokens.end(), 0);
    for (size_t i = 0; i < len; ++i)
      tokens[i] = int32_t(context[context.size() - len + i]);
    model.logits(params, tokens.data(), logits.data());
    const float *row = &logits[(len - 1) * size_t(v)];
    std::vector<int> order(static_cast<size_t>(v));
    std::iota(order.begin(), order.end(), 0);
    int64_t k = o.topK > 0 ? std::min<int64_t>(o.topK, v) : v;
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int a, int c) { return row[a] > row[c]; });
    TokenId next = TokenId(order[0]);
    if (o.temperature > 0) {
      std::vector<double> p(static_cast<size_t>(k));
      double sum = 0;
      for (int64_t i = 0; i < k; ++i)
        sum += p[i] = std::exp((row[order[i]] - row[order[0]]) / o.temperature);
      double r = uniform() * sum;
      for (int64_t i = 0; i < k; ++i) {
        r -= p[i];
        if (r <= 0 || i + 1 == k) {
          next = TokenId(order[i]);
          break;
        }
      }
    }
    context.push_back(next);
    out.push_back(next);
  }
  return out;
}
