//===- SupportAttentionTest.cpp - The packages' fused attention, on data --===//
//
// Links the C support code every CPU package is compiled with
// (runtime/support/CPUAttention.c) and checks mixrt_flash_attention and
// mixrt_flash_attention_grad against a direct double-precision
// implementation that holds the whole score matrix: P = softmax(q k^T /
// sqrt(dh) + causal mask, prefix keys unmasked), out = P v, and the
// gradients dv = P^T dout, dP = dout v^T, dS = P (dP - rowsum(P dP)),
// dq = dS k / sqrt(dh), dk = dS^T q / sqrt(dh). This test runs under the
// sanitizers (scripts/sanitize.sh); MixTorchTests' AttentionKernelTest
// checks the same kernels against libtorch.
//
//===----------------------------------------------------------------------===//

#include "AttentionShape.h"

#include "mixrt/PackageABI.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using Shape = mixtest::AttentionShape;

/// The attention and its gradients, one (batch row, head) at a time, in
/// double with the whole score matrix.
struct Reference {
  std::vector<double> out, dqkv, dprefixK, dprefixV;

  Reference(const Shape &s, const std::vector<float> &qkv,
            const std::vector<float> &pk, const std::vector<float> &pv,
            const std::vector<float> &dout) {
    int64_t d = s.heads * s.dh;
    out.assign(s.batch * s.seq * d, 0);
    dqkv.assign(s.batch * s.seq * 3 * d, 0);
    dprefixK.assign(pk.size(), 0);
    dprefixV.assign(pv.size(), 0);
    double scale = 1 / std::sqrt(double(s.dh));
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.heads; ++h) {
        int64_t stream = s.prefix ? b / (s.batch / s.streams) : 0;
        // Key j: the prefix's first, then the sequence's.
        auto qkvAt = [&](int64_t row, int64_t part) {
          return (b * s.seq + row) * 3 * d + part * d + h * s.dh;
        };
        auto prefixAt = [&](int64_t j) {
          return ((stream * s.heads + h) * s.prefix + j) * s.dh;
        };
        auto key = [&](int64_t j, int64_t c) -> double {
          return j < s.prefix ? pk[prefixAt(j) + c]
                              : qkv[qkvAt(j - s.prefix, 1) + c];
        };
        auto value = [&](int64_t j, int64_t c) -> double {
          return j < s.prefix ? pv[prefixAt(j) + c]
                              : qkv[qkvAt(j - s.prefix, 2) + c];
        };
        for (int64_t i = 0; i < s.seq; ++i) {
          int64_t seen = s.prefix + i + 1;
          std::vector<double> p(seen), dp(seen);
          double max = -INFINITY, sum = 0;
          for (int64_t j = 0; j < seen; ++j) {
            double dot = 0;
            for (int64_t c = 0; c < s.dh; ++c)
              dot += qkv[qkvAt(i, 0) + c] * key(j, c);
            p[j] = dot * scale;
            max = std::max(max, p[j]);
          }
          for (double &x : p)
            sum += (x = std::exp(x - max));
          for (double &x : p)
            x /= sum;
          const float *g = &dout[(b * s.seq + i) * d + h * s.dh];
          double rowDot = 0;
          for (int64_t j = 0; j < seen; ++j) {
            for (int64_t c = 0; c < s.dh; ++c) {
              out[(b * s.seq + i) * d + h * s.dh + c] += p[j] * value(j, c);
              dp[j] += g[c] * value(j, c);
            }
            rowDot += p[j] * dp[j];
          }
          for (int64_t j = 0; j < seen; ++j) {
            double ds = p[j] * (dp[j] - rowDot);
            for (int64_t c = 0; c < s.dh; ++c) {
              double dk = ds * qkv[qkvAt(i, 0) + c] * scale, dv = p[j] * g[c];
              dqkv[qkvAt(i, 0) + c] += ds * key(j, c) * scale;
              if (j < s.prefix) {
                dprefixK[prefixAt(j) + c] += dk;
                dprefixV[prefixAt(j) + c] += dv;
              } else {
                dqkv[qkvAt(j - s.prefix, 1) + c] += dk;
                dqkv[qkvAt(j - s.prefix, 2) + c] += dv;
              }
            }
          }
        }
      }
  }
};

double relError(const std::vector<float> &got,
                const std::vector<double> &want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / (norm > 0 ? norm : 1));
}

class SupportAttention : public ::testing::TestWithParam<Shape> {};

TEST_P(SupportAttention, MatchesTheWholeScoreMatrix) {
  const Shape s = GetParam();
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0, 1.5f);
  auto random = [&](int64_t n) {
    std::vector<float> v(n);
    for (float &x : v)
      x = normal(rng);
    return v;
  };
  int64_t d = s.heads * s.dh,
          prefixSize = s.streams * s.heads * s.prefix * s.dh;
  std::vector<float> qkv = random(s.batch * s.seq * 3 * d);
  std::vector<float> pk = random(prefixSize), pv = random(prefixSize);
  std::vector<float> dout = random(s.batch * s.seq * d);
  Reference ref(s, qkv, pk, pv, dout);

  // Without prefixes, their places hold qkv's (and dqkv's) buffer.
  std::vector<float> out(s.batch * s.seq * d), lse(s.batch * s.heads * s.seq);
  std::vector<float> dqkv(qkv.size(), NAN), dpk(prefixSize, NAN),
      dpv(prefixSize, NAN);
  float *pkData = s.prefix ? pk.data() : qkv.data();
  float *pvData = s.prefix ? pv.data() : qkv.data();
  mixrt_flash_attention(qkv.data(), 0, pkData, 0, pvData, 0, out.data(), 0,
                        lse.data(), 0, s.batch, s.seq, s.heads, s.dh, s.streams,
                        s.prefix);
  EXPECT_LT(relError(out, ref.out), 1e-5);
  // Every lse is finite: each query sees at least its own key.
  for (float x : lse)
    ASSERT_TRUE(std::isfinite(x));
  float *dpkData = s.prefix ? dpk.data() : dqkv.data();
  float *dpvData = s.prefix ? dpv.data() : dqkv.data();
  mixrt_flash_attention_grad(qkv.data(), 0, pkData, 0, pvData, 0, out.data(), 0,
                             lse.data(), 0, dout.data(), 0, dqkv.data(), 0,
                             dpkData, 0, dpvData, 0, s.batch, s.seq, s.heads,
                             s.dh, s.streams, s.prefix);
  // Every element of the results is written (they start as NaN).
  EXPECT_LT(relError(dqkv, ref.dqkv), 1e-4);
  if (s.prefix) {
    EXPECT_LT(relError(dpk, ref.dprefixK), 1e-4);
    EXPECT_LT(relError(dpv, ref.dprefixV), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SupportAttention,
    ::testing::Values(Shape{2, 5, 2, 4}, Shape{3, 1, 1, 8}, Shape{1, 70, 2, 20},
                      Shape{1, 130, 1, 33}, Shape{4, 9, 2, 16, 2, 3},
                      Shape{2, 66, 1, 8, 1, 65}, Shape{1, 129, 1, 5, 1, 1}),
    [](const auto &info) { return mixtest::attentionShapeName(info.param); });

} // namespace
