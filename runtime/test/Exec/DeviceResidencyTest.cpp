//===- DeviceResidencyTest.cpp - Tensors kept in a cuda package's memory --===//
//
// CompiledModel::keepOnDevice on an emulated cuda package (named by
// MIXRT_TEST_EMULATED_PACKAGE: test/Target/CUDA/emulate-resident.test
// compiles one; without it the tests are skipped): calls on kept tensors
// compute the bits of calls that copy everything, a kept tensor that a call
// wrote is stale on the host (NaN, in an emulated package) until
// syncToHost, keeping a tensor again uploads the host's new values, a part
// of a kept tensor is refused, and MIXRT_CUDA_RESIDENT=0 keeps nothing.
//
//===----------------------------------------------------------------------===//

#include "mixrt/CompiledModel.h"
#include "mixrt/Error.h"
#include "mixrt/Init.h"
#include "mixrt/Manifest.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mixrt;

namespace {

using Tensors = std::vector<std::vector<float>>;

std::vector<const float *> constPtrs(const Tensors &ts) {
  std::vector<const float *> out;
  for (const auto &t : ts)
    out.push_back(t.data());
  return out;
}

std::vector<float *> ptrs(Tensors &ts) {
  std::vector<float *> out;
  for (auto &t : ts)
    out.push_back(t.data());
  return out;
}

/// Whether \p a and \p b hold the same bits.
bool sameBits(const Tensors &a, const Tensors &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].size() != b[i].size() ||
        std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)))
      return false;
  return true;
}

/// Whether every element of \p ts is a NaN.
bool allNaN(const Tensors &ts) {
  for (const auto &t : ts)
    for (float x : t)
      if (!std::isnan(x))
        return false;
  return true;
}

bool sameBits(const LossValues &a, const LossValues &b) {
  return std::memcmp(&a.loss, &b.loss, sizeof(float)) == 0 &&
         std::memcmp(&a.ce, &b.ce, sizeof(float)) == 0 &&
         std::memcmp(&a.aux, &b.aux, sizeof(float)) == 0;
}

class DeviceResidency : public ::testing::Test {
protected:
  void SetUp() override {
    const char *path = std::getenv("MIXRT_TEST_EMULATED_PACKAGE");
    if (!path || !*path)
      GTEST_SKIP() << "MIXRT_TEST_EMULATED_PACKAGE names no package";
    manifest = readManifest(path);
    ASSERT_EQ(manifest.target, "cuda");
    TensorFile init = initParams(manifest);
    for (const NamedTensor &t : init.getTensors()) {
      const float *d = t.tensor.getData<float>();
      params.emplace_back(d, d + t.tensor.getNumElements());
      zeros.emplace_back(t.tensor.getNumElements(), 0.0f);
    }
    size_t n = size_t(manifest.batch * manifest.seq);
    for (size_t i = 0; i < n; ++i) {
      tokens.push_back(int32_t((7 * i + 1) % manifest.vocabSize));
      targets.push_back(int32_t((5 * i + 3) % manifest.vocabSize));
    }
  }

  Manifest manifest;
  /// The initial parameters, and tensors of zeros of their shapes.
  Tensors params, zeros;
  std::vector<int32_t> tokens, targets;
  const float hyper[3] = {1e-2f, 0.1f, 0.001f};
};

TEST_F(DeviceResidency, KeptTensorsComputeTheSameBitsAndAreStaleOnTheHost) {
  CompiledModel model(manifest);
  ASSERT_TRUE(model.keepsOnDevice());

  // Every argument copied around each call: a training step, then the
  // loss at the updated parameters.
  Tensors p0 = params, g0 = zeros, m0 = zeros, v0 = zeros;
  LossValues loss0 =
      model.grad(constPtrs(p0), tokens.data(), targets.data(), ptrs(g0));
  float norm0 = model.adamw(ptrs(p0), constPtrs(g0), ptrs(m0), ptrs(v0), hyper);
  LossValues after0 =
      model.forward(constPtrs(p0), tokens.data(), targets.data());
  ASSERT_TRUE(std::isfinite(loss0.loss) && std::isfinite(norm0) &&
              std::isfinite(after0.loss));

  // The same with the state kept on the device.
  Tensors p1 = params, g1 = zeros, m1 = zeros, v1 = zeros;
  model.keepOnDevice(p1, /*upload=*/true);
  model.keepOnDevice(m1, /*upload=*/true);
  model.keepOnDevice(v1, /*upload=*/true);
  model.keepOnDevice(g1, /*upload=*/false);
  LossValues loss1 =
      model.grad(constPtrs(p1), tokens.data(), targets.data(), ptrs(g1));
  EXPECT_TRUE(sameBits(loss1, loss0));
  // The gradients stayed on the device; the parameters were only read.
  EXPECT_TRUE(allNaN(g1));
  EXPECT_TRUE(sameBits(p1, params));
  float norm1 = model.adamw(ptrs(p1), constPtrs(g1), ptrs(m1), ptrs(v1), hyper);
  EXPECT_EQ(std::memcmp(&norm1, &norm0, sizeof(float)), 0);
  EXPECT_TRUE(allNaN(p1));
  EXPECT_TRUE(allNaN(m1));
  EXPECT_TRUE(allNaN(v1));
  // forward reads the updated parameters on the device, not the host's.
  LossValues after1 =
      model.forward(constPtrs(p1), tokens.data(), targets.data());
  EXPECT_TRUE(sameBits(after1, after0));

  // Only the tensors asked for come to the host.
  model.syncToHost(p1);
  EXPECT_TRUE(sameBits(p1, p0));
  EXPECT_TRUE(allNaN(m1));
  model.syncToHost();
  EXPECT_TRUE(sameBits(g1, g0));
  EXPECT_TRUE(sameBits(m1, m0));
  EXPECT_TRUE(sameBits(v1, v0));

  // Released, they are copied around each call again: the host's
  // gradients are current after grad.
  model.releaseDeviceCopies();
  Tensors g2 = zeros;
  model.grad(constPtrs(params), tokens.data(), targets.data(), ptrs(g1));
  model.grad(constPtrs(params), tokens.data(), targets.data(), ptrs(g2));
  EXPECT_TRUE(sameBits(g1, g2));
  EXPECT_FALSE(allNaN(g1));
}

TEST_F(DeviceResidency, KeepingAgainUploadsTheHostsValues) {
  CompiledModel model(manifest);
  Tensors changed = params;
  for (float &x : changed[0])
    x *= 2;
  LossValues want =
      model.forward(constPtrs(changed), tokens.data(), targets.data());

  Tensors p = params;
  model.keepOnDevice(p, /*upload=*/true);
  LossValues before =
      model.forward(constPtrs(p), tokens.data(), targets.data());
  EXPECT_FALSE(sameBits(before, want));
  const float *kept = p[0].data();
  p = changed; // new values in the same buffers (equal sizes)
  ASSERT_EQ(p[0].data(), kept);
  model.keepOnDevice(p, /*upload=*/true);
  EXPECT_TRUE(sameBits(
      model.forward(constPtrs(p), tokens.data(), targets.data()), want));
}

TEST_F(DeviceResidency, APartOfAKeptTensorIsRefused) {
  CompiledModel model(manifest);
  Tensors p = params, g = zeros;
  model.keepOnDevice(p, /*upload=*/true);
  std::vector<const float *> shifted = constPtrs(p);
  shifted[0] += 1;
  try {
    model.grad(shifted, tokens.data(), targets.data(), ptrs(g));
    FAIL() << "grad took a pointer into a kept tensor";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "argument 0 of grad (" +
                  std::to_string(p[0].size() * sizeof(float)) +
                  " bytes) overlaps a buffer kept on the device"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(DeviceResidency, ResidentZeroKeepsNothing) {
  ::setenv("MIXRT_CUDA_RESIDENT", "0", 1);
  CompiledModel model(manifest);
  ::unsetenv("MIXRT_CUDA_RESIDENT");
  EXPECT_FALSE(model.keepsOnDevice());
  Tensors g = zeros;
  model.keepOnDevice(g, /*upload=*/false);
  model.grad(constPtrs(params), tokens.data(), targets.data(), ptrs(g));
  EXPECT_FALSE(allNaN(g));
}

} // namespace
