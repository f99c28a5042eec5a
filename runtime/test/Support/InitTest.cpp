//===- InitTest.cpp - Tests of the deterministic initialisation -----------===//
//
// splitmix64 and FNV-1a against their published reference values, the
// stream keying and Box-Muller against an independent reimplementation of
// docs/package.md, the statistics of each initialiser, and determinism.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Init.h"

#include "TestUtil.h"

#include <cmath>

using namespace mixrt;
using mixrt::test::failsWith;

namespace {

//===----------------------------------------------------------------------===//
// An independent reimplementation of docs/package.md, written from the
// published constants, to compare the library with.
//===----------------------------------------------------------------------===//

uint64_t referenceSplitMix(uint64_t &x) {
  // Vigna, splitmix64.c (public domain).
  uint64_t z = (x += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

uint64_t referenceFnv1a(const std::string &s) {
  uint64_t h = UINT64_C(14695981039346656037); // FNV-1a 64 offset basis
  for (unsigned char c : s)
    h = (h ^ c) * UINT64_C(1099511628211); // FNV 64 prime
  return h;
}

uint64_t referenceKey(uint64_t seed, const std::string &name) {
  uint64_t x = seed;
  uint64_t y = referenceSplitMix(x) ^ referenceFnv1a(name);
  return referenceSplitMix(y);
}

double referenceUniform(uint64_t &state) {
  return std::ldexp(static_cast<double>(referenceSplitMix(state) >> 11) + 0.5,
                    -53);
}

ParamInfo param(const std::string &name, std::vector<int64_t> shape,
                InitKind init, double sigma = 0, double bound = 0) {
  ParamInfo p;
  p.name = name;
  p.shape = std::move(shape);
  p.init = init;
  p.std = sigma;
  p.bound = bound;
  return p;
}

struct Moments {
  double mean, stddev, min, max;
};

Moments moments(const std::vector<float> &values) {
  double sum = 0, sumSquares = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (float v : values) {
    sum += v;
    sumSquares += double(v) * v;
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
  }
  double n = values.size();
  double mean = sum / n;
  return {mean, std::sqrt(sumSquares / n - mean * mean), lo, hi};
}

TEST(InitTest, SplitMix64MatchesThePublishedSequence) {
  // The first outputs of splitmix64.c from state 0.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), UINT64_C(0xe220a8397b1dcdaf));
  EXPECT_EQ(rng.next(), UINT64_C(0x6e789e6aa1b965f4));
  for (uint64_t seed : {UINT64_C(1), UINT64_C(0xdeadbeef), ~UINT64_C(0)}) {
    SplitMix64 a(seed);
    uint64_t b = seed;
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(a.next(), referenceSplitMix(b)) << seed;
  }
}

TEST(InitTest, Fnv1aMatchesThePublishedVectors) {
  EXPECT_EQ(fnv1a64(""), UINT64_C(0xcbf29ce484222325));
  EXPECT_EQ(fnv1a64("a"), UINT64_C(0xaf63dc4c8601ec8c));
  EXPECT_EQ(fnv1a64("foobar"), UINT64_C(0x85944171f73967e8));
  EXPECT_EQ(fnv1a64("h.0.mlp.kernels"), referenceFnv1a("h.0.mlp.kernels"));
  // Piecewise: each piece continues from the hash so far.
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
  EXPECT_EQ(fnv1a64("", kFnv1a64Basis), fnv1a64(""));
}

TEST(InitTest, UniformsAreNeverZero) {
  // The smallest output maps to 2^-54, so log(u1) is always finite. The
  // largest, (2^53 - 1 + 0.5) * 2^-53, rounds to exactly 1 in double: the
  // formula of docs/package.md gives (0, 1], which Box-Muller tolerates
  // (log 1 = 0) and which keeps uniform inits inside [-bound, bound].
  EXPECT_EQ((0 + 0.5) * 0x1.0p-53, 0x1.0p-54);
  EXPECT_EQ(((UINT64_MAX >> 11) + 0.5) * 0x1.0p-53, 1.0);
  SplitMix64 a(42);
  uint64_t b = 42;
  for (int i = 0; i < 1000; ++i) {
    double u = a.nextUniform();
    EXPECT_EQ(u, referenceUniform(b));
    ASSERT_GT(u, 0.0);
    ASSERT_LE(u, 1.0);
  }
}

TEST(InitTest, StreamKeyIsSeedThenNameHash) {
  EXPECT_EQ(getStreamKey(0, "wte.weight"), referenceKey(0, "wte.weight"));
  EXPECT_EQ(getStreamKey(1234, "h.3.attn.c_proj.weight"),
            referenceKey(1234, "h.3.attn.c_proj.weight"));
  EXPECT_NE(getStreamKey(0, "a"), getStreamKey(1, "a"));
  EXPECT_NE(getStreamKey(0, "a"), getStreamKey(0, "b"));
}

TEST(InitTest, NormalIsBoxMullerOnTheKeyedStream) {
  ParamInfo p = param("wte.weight", {3, 5}, InitKind::Normal, 0.02);
  std::vector<float> values = initParam(p, 99);
  uint64_t state = referenceKey(99, "wte.weight");
  for (float value : values) {
    double u1 = referenceUniform(state), u2 = referenceUniform(state);
    double z =
        std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586476925 * u2);
    EXPECT_EQ(value, static_cast<float>(z * 0.02));
  }
}

TEST(InitTest, UniformIsScaledOnTheKeyedStream) {
  ParamInfo p = param("h.0.mlp.kernels", {2, 4, 3}, InitKind::Uniform, 0, 0.3);
  std::vector<float> values = initParam(p, 5);
  uint64_t state = referenceKey(5, "h.0.mlp.kernels");
  for (float value : values)
    EXPECT_EQ(value,
              static_cast<float>(0.3 * (2 * referenceUniform(state) - 1)));
}

TEST(InitTest, NormalHasTheRequestedMoments) {
  const double sigma = 0.02;
  std::vector<float> values =
      initParam(param("x", {100000}, InitKind::Normal, sigma), 0);
  Moments m = moments(values);
  // The mean of n samples has standard error sigma/sqrt(n); allow 5 of them.
  EXPECT_LT(std::fabs(m.mean), 5 * sigma / std::sqrt(100000.0));
  // The sample std has relative standard error 1/sqrt(2n) ~ 0.22%.
  EXPECT_NEAR(m.stddev / sigma, 1.0, 0.012);
  // In 1e5 draws about 23 fall past 3.5 sigma on each side if the tails
  // are right, and none past 6.
  EXPECT_GT(m.max, 3.5 * sigma);
  EXPECT_LT(m.max, 6 * sigma);
  EXPECT_LT(m.min, -3.5 * sigma);
  EXPECT_GT(m.min, -6 * sigma);
}

TEST(InitTest, UniformHasTheRequestedMoments) {
  const double bound = 0.1369;
  std::vector<float> values =
      initParam(param("k", {100000}, InitKind::Uniform, 0, bound), 0);
  Moments m = moments(values);
  double sd = bound / std::sqrt(3.0);
  EXPECT_LT(std::fabs(m.mean), 5 * sd / std::sqrt(100000.0));
  EXPECT_NEAR(m.stddev / sd, 1.0, 0.01);
  EXPECT_GE(m.min, -bound);
  EXPECT_LE(m.max, bound);
  EXPECT_LT(m.min, -0.999 * bound);
  EXPECT_GT(m.max, 0.999 * bound);
}

TEST(InitTest, ConstantInitialisers) {
  EXPECT_EQ(initParam(param("b", {3}, InitKind::Zeros), 0),
            (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(initParam(param("w", {2, 2}, InitKind::Ones), 0),
            (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(initParam(param("p", {3, 3}, InitKind::Identity), 0),
            (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(initParam(param("s", {}, InitKind::Ones), 0),
            (std::vector<float>{1}));
  EXPECT_TRUE(failsWith(
      [] {
        initParam(param("p", {2, 3}, InitKind::Identity), 0);
      },
      {"parameter 'p'", "square"}));
}

TEST(InitTest, ZeroStdGivesZeros) {
  for (float v : initParam(param("w", {10}, InitKind::Normal, 0.0), 3))
    EXPECT_EQ(v, 0.0f);
}

TEST(InitTest, DeterministicAndIndependentOfTensorOrder) {
  Manifest forward;
  forward.seed = 11;
  forward.params = {
      param("wte.weight", {8, 4}, InitKind::Normal, 0.02),
      param("h.0.mlp.kernels", {2, 3, 4}, InitKind::Uniform, 0, 0.2),
      param("h.0.ln_1.weight", {4}, InitKind::Ones)};
  Manifest backward = forward;
  std::reverse(backward.params.begin(), backward.params.end());

  TensorFile a = initParams(forward);
  TensorFile b = initParams(backward);
  TensorFile again = initParams(forward);
  ASSERT_EQ(a.getTensors().size(), 3u);
  for (const NamedTensor &named : a.getTensors()) {
    EXPECT_EQ(named.tensor.dtype, DType::F32);
    EXPECT_EQ(named.tensor.data, b.find(named.name)->data) << named.name;
    EXPECT_EQ(named.tensor.data, again.find(named.name)->data) << named.name;
  }
  EXPECT_EQ(a.getTensors()[0].name, "wte.weight"); // the manifest's order
  EXPECT_EQ(a.find("wte.weight")->shape, (std::vector<int64_t>{8, 4}));

  // Another seed, or another name, draws other values.
  Manifest reseeded = forward;
  reseeded.seed = 12;
  EXPECT_NE(initParams(reseeded).find("wte.weight")->data,
            a.find("wte.weight")->data);
  std::vector<float> renamed =
      initParam(param("wpe.weight", {8, 4}, InitKind::Normal, 0.02), 11);
  EXPECT_NE(renamed, initParam(forward.params[0], 11));
}

} // namespace
