//===- InputsTest.cpp - Tests of the parameter and batch checks -----------===//
//
// docs/models.md §8: a missing or extra parameter, a wrong shape or dtype, a
// token id outside [0, V) are errors naming the file and the tensor.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Inputs.h"
#include "mixrt/Init.h"

#include "TestUtil.h"

using namespace mixrt;
using mixrt::test::failsWith;
using mixrt::test::sampleManifest;

namespace {

const char *const kParams = "p.safetensors";
const char *const kBatch = "b.safetensors";

class InputsTest : public ::testing::Test {
protected:
  InputsTest()
      : manifest(parseManifest(json::write(sampleManifest()), "m.json")) {
    manifest.packagePath = "m.mixpkg";
  }

  /// A valid batch (batch 2, seq 3, vocab 16) of type T.
  template <typename T> TensorFile batch() {
    TensorFile file;
    file.add("tokens", Tensor::create<T>({2, 3}, {0, 1, 2, 3, 4, 15}));
    file.add("targets", Tensor::create<T>({2, 3}, {1, 2, 3, 4, 15, 0}));
    return file;
  }

  /// The valid parameters with \p name replaced by \p tensor (or dropped).
  TensorFile paramsWith(const std::string &name, std::optional<Tensor> tensor) {
    TensorFile file;
    TensorFile valid = initParams(manifest);
    for (const NamedTensor &named : valid.getTensors()) {
      if (named.name != name)
        file.add(named.name, named.tensor);
      else if (tensor)
        file.add(named.name, *tensor);
    }
    return file;
  }

  Manifest manifest;
};

TEST_F(InputsTest, AcceptsTheInitialParameters) {
  TensorFile params = initParams(manifest);
  std::vector<const Tensor *> ordered = checkParams(manifest, params, kParams);
  ASSERT_EQ(ordered.size(), manifest.params.size());
  for (size_t i = 0; i < ordered.size(); ++i)
    EXPECT_EQ(ordered[i], params.find(manifest.params[i].name));
}

TEST_F(InputsTest, RejectsAMissingParameter) {
  TensorFile params = paramsWith("h.0.ln_1.bias", std::nullopt);
  EXPECT_TRUE(
      failsWith([&] { checkParams(manifest, params, kParams); },
                {"p.safetensors: missing parameter 'h.0.ln_1.bias'", "(4,)"}));
}

TEST_F(InputsTest, RejectsAnExtraTensor) {
  TensorFile params = initParams(manifest);
  params.add("h.9.ln_1.bias", Tensor::create<float>({4}, {0, 0, 0, 0}));
  EXPECT_TRUE(failsWith([&] { checkParams(manifest, params, kParams); },
                        {"p.safetensors: unexpected tensor 'h.9.ln_1.bias'",
                         "not a parameter of m.mixpkg"}));
}

TEST_F(InputsTest, RejectsAWrongDtype) {
  TensorFile params =
      paramsWith("h.0.ln_1.weight", Tensor::create<double>({4}, {1, 1, 1, 1}));
  EXPECT_TRUE(failsWith([&] { checkParams(manifest, params, kParams); },
                        {"p.safetensors: parameter 'h.0.ln_1.weight'",
                         "dtype F64, expected F32"}));
}

TEST_F(InputsTest, RejectsAWrongShape) {
  TensorFile params =
      paramsWith("h.0.altup.predict",
                 Tensor::create<float>({9}, {1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_TRUE(failsWith([&] { checkParams(manifest, params, kParams); },
                        {"p.safetensors: parameter 'h.0.altup.predict'",
                         "shape (9,), expected (3, 3)"}));
}

TEST_F(InputsTest, AcceptsInt32AndInt64Batches) {
  for (TensorFile file : {batch<int32_t>(), batch<int64_t>()}) {
    TokenBatch b = checkBatch(manifest, file, kBatch);
    EXPECT_EQ(b.batch, 2);
    EXPECT_EQ(b.seq, 3);
    EXPECT_EQ(b.tokens, (std::vector<int64_t>{0, 1, 2, 3, 4, 15}));
    EXPECT_EQ(b.targets, (std::vector<int64_t>{1, 2, 3, 4, 15, 0}));
  }
}

TEST_F(InputsTest, RejectsMissingTokensOrTargets) {
  TensorFile onlyTokens;
  onlyTokens.add("tokens", *batch<int32_t>().find("tokens"));
  EXPECT_TRUE(failsWith([&] { checkBatch(manifest, onlyTokens, kBatch); },
                        {"b.safetensors: missing tensor 'targets'",
                         "I32 or I64 of shape (2, 3)"}));
  TensorFile empty;
  EXPECT_TRUE(failsWith([&] { checkBatch(manifest, empty, kBatch); },
                        {"missing tensor 'tokens'"}));
}

TEST_F(InputsTest, RejectsFloatTokens) {
  TensorFile file;
  file.add("tokens", Tensor::create<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  file.add("targets", *batch<int32_t>().find("targets"));
  EXPECT_TRUE(failsWith(
      [&] { checkBatch(manifest, file, kBatch); },
      {"b.safetensors: tensor 'tokens' has dtype F32", "expected I32 or I64"}));
}

TEST_F(InputsTest, RejectsTheWrongBatchShape) {
  TensorFile file;
  file.add("tokens", *batch<int64_t>().find("tokens"));
  file.add("targets", Tensor::create<int64_t>({3, 2}, {0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(failsWith(
      [&] { checkBatch(manifest, file, kBatch); },
      {"tensor 'targets' has shape (3, 2), expected (2, 3)", "batch and seq"}));
}

TEST_F(InputsTest, RejectsIdsOutsideTheVocabulary) {
  TensorFile high;
  high.add("tokens", Tensor::create<int32_t>({2, 3}, {0, 1, 2, 3, 16, 5}));
  high.add("targets", *batch<int32_t>().find("targets"));
  EXPECT_TRUE(failsWith(
      [&] { checkBatch(manifest, high, kBatch); },
      {"b.safetensors: tensor 'tokens': id 16 at [1, 1]", "outside [0, 16)"}));
  TensorFile negative;
  negative.add("tokens", *batch<int64_t>().find("tokens"));
  negative.add("targets", Tensor::create<int64_t>({2, 3}, {0, -1, 2, 3, 4, 5}));
  EXPECT_TRUE(failsWith([&] { checkBatch(manifest, negative, kBatch); },
                        {"tensor 'targets': id -1 at [0, 1]"}));
  TensorFile huge;
  huge.add("tokens",
           Tensor::create<int64_t>({2, 3}, {0, 1, 2, 3, 4, int64_t{1} << 40}));
  huge.add("targets", *batch<int64_t>().find("targets"));
  EXPECT_TRUE(failsWith([&] { checkBatch(manifest, huge, kBatch); },
                        {"id 1099511627776 at [1, 2]"}));
}

TEST_F(InputsTest, RejectsExtraBatchTensors) {
  TensorFile file = batch<int32_t>();
  file.add("mask", Tensor::create<int32_t>({1}, {1}));
  EXPECT_TRUE(failsWith([&] { checkBatch(manifest, file, kBatch); },
                        {"b.safetensors: unexpected tensor 'mask'"}));
}

} // namespace
