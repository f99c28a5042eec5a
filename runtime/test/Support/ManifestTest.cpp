//===- ManifestTest.cpp - Tests of manifest reading -----------------------===//
//
// A valid manifest is read completely; each way docs/package.md can be
// violated is rejected with the manifest's path, the line and the key.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Manifest.h"

#include "TestUtil.h"

using namespace mixrt;
using mixrt::test::erase;
using mixrt::test::failsWith;
using mixrt::test::member;
using mixrt::test::sampleManifest;
using mixrt::test::setLibrary;
using mixrt::test::TempDir;
using mixrt::test::writeBytes;

namespace {

const char *const kPath = "pkg/manifest.json";

Manifest parse(const json::Value &value) {
  return parseManifest(json::write(value), kPath);
}

/// The sample manifest changed by \p edit must be rejected with \p parts.
template <typename F>
::testing::AssertionResult rejects(F &&edit,
                                   std::initializer_list<std::string> parts) {
  json::Value value = sampleManifest();
  edit(value);
  auto result = failsWith([&] { parse(value); }, parts);
  if (!result)
    return result;
  return failsWith([&] { parse(value); }, {kPath});
}

json::Value &paramAt(json::Value &manifest, size_t i) {
  return member(manifest, "params").getArray()[i];
}

TEST(ManifestTest, ReadsTheSampleManifest) {
  Manifest m = parse(sampleManifest());
  EXPECT_EQ(m.manifestPath, kPath);
  EXPECT_EQ(m.target, "cpu");
  EXPECT_EQ(m.batch, 2);
  EXPECT_EQ(m.seq, 3);
  EXPECT_EQ(m.vocabSize, 16);
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.initStd, 0.02);
  EXPECT_EQ(m.spec.find("arch")->getString(), "dense");
  EXPECT_FALSE(m.library);
  ASSERT_EQ(m.params.size(), 5u);
  EXPECT_EQ(m.params[0].name, "wte.weight");
  EXPECT_EQ(m.params[0].shape, (std::vector<int64_t>{16, 4}));
  EXPECT_EQ(m.params[0].init, InitKind::Normal);
  EXPECT_EQ(m.params[0].std, 0.02);
  EXPECT_TRUE(m.params[0].decay);
  EXPECT_EQ(m.params[1].init, InitKind::Uniform);
  EXPECT_EQ(m.params[1].bound, 0.5);
  EXPECT_EQ(m.params[2].init, InitKind::Zeros);
  EXPECT_FALSE(m.params[2].decay);
  EXPECT_EQ(m.params[3].init, InitKind::Ones);
  EXPECT_EQ(m.params[4].init, InitKind::Identity);
}

// `operands`, written with --precision bf16 only: fp32 when absent.
TEST(ManifestTest, ReadsTheOperandsKept) {
  json::Value value = sampleManifest();
  EXPECT_EQ(parse(value).operands, "fp32");
  member(value, "operands") = "bf16";
  EXPECT_EQ(parse(value).operands, "bf16");
}

TEST(ManifestTest, ReadsTheLibraryAndIgnoresUnknownKeys) {
  json::Value value = sampleManifest();
  setLibrary(value, "model.so");
  member(value, "entry_points") = json::Value(json::Value::Array{});
  Manifest m = parse(value);
  ASSERT_TRUE(m.library);
  EXPECT_EQ(*m.library, "model.so");
}

TEST(ManifestTest, ReadsTheCompiledAdamWHyperparameters) {
  json::Value value = sampleManifest();
  setLibrary(value, "model.so");
  member(value, "adamw") = json::parse(
      R"({"beta1": 0.8, "beta2": 0.99, "epsilon": 1e-06, "weight_decay": 0,
          "max_grad_norm": 2.5})");
  Manifest m = parse(value);
  ASSERT_TRUE(m.adamw);
  EXPECT_EQ(m.adamw->beta1, 0.8);
  EXPECT_EQ(m.adamw->beta2, 0.99);
  EXPECT_EQ(m.adamw->epsilon, 1e-6);
  EXPECT_EQ(m.adamw->weightDecay, 0.0);
  EXPECT_EQ(m.adamw->maxGradNorm, 2.5);
  EXPECT_FALSE(parse(sampleManifest()).adamw);
}

TEST(ManifestTest, RejectsALibraryWithoutValidAdamWHyperparameters) {
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        setLibrary(v, "model.so");
        erase(v, "adamw");
      },
      {"adamw: missing"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        setLibrary(v, "model.so");
        member(member(v, "adamw"), "beta2") = 1.0;
      },
      {"adamw.beta2: expected a number in [0, 1), got 1"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        setLibrary(v, "model.so");
        member(member(v, "adamw"), "epsilon") = 0.0;
      },
      {"adamw.epsilon: expected a positive number, got 0"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        setLibrary(v, "model.so");
        erase(member(v, "adamw"), "max_grad_norm");
      },
      {"adamw.max_grad_norm: missing"}));
}

TEST(ManifestTest, ReadsAndChecksTheLibraryChecksum) {
  json::Value value = sampleManifest();
  setLibrary(value, "model.so");
  member(value, "library_fnv1a64") = json::Value("0123456789abcdef");
  Manifest m = parse(value);
  ASSERT_TRUE(m.libraryChecksum);
  EXPECT_EQ(*m.libraryChecksum, "0123456789abcdef");
  EXPECT_FALSE(parse(sampleManifest()).libraryChecksum);
  for (const char *bad : {"0123456789ABCDEF", "12345", "0123456789abcdefg"})
    EXPECT_TRUE(rejects(
        [&](json::Value &v) {
          setLibrary(v, "model.so");
          member(v, "library_fnv1a64") = json::Value(bad);
        },
        {"library_fnv1a64: expected 16 lowercase hex digits"}))
        << bad;
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        member(v, "library_fnv1a64") = json::Value("0123456789abcdef");
      },
      {"library_fnv1a64: a checksum without a library"}));
}

/// An adamw entry of two parameters: p0, p1, g0, g1, m0, m1, v0, v1, hyper,
/// then the gradient norm; \p updated is its updated_inputs.
json::Value withAdamWEntry(json::Value value, json::Value updated) {
  json::Value::Array bytes;
  for (int i = 0; i < 8; ++i)
    bytes.push_back(64);
  bytes.push_back(12);
  bytes.push_back(4);
  json::Value adamw = json::Value::Object{};
  member(adamw, "arg_bytes") = json::Value(std::move(bytes));
  member(adamw, "num_inputs") = 9;
  member(adamw, "updated_inputs") = std::move(updated);
  json::Value entries = json::Value::Object{};
  member(entries, "adamw") = std::move(adamw);
  member(value, "entries") = std::move(entries);
  return value;
}

TEST(ManifestTest, ReadsTheUpdatedInputs) {
  Manifest m = parse(
      withAdamWEntry(sampleManifest(), json::Value::Array{0, 1, 4, 5, 6, 7}));
  const Manifest::EntryArgs &adamw = m.entryArgs.at("adamw");
  EXPECT_EQ(adamw.numInputs, 9u);
  EXPECT_EQ(adamw.bytes.size(), 10u);
  EXPECT_EQ(adamw.updated, (std::vector<size_t>{0, 1, 4, 5, 6, 7}));
  // Indices of outputs, repeated or out of order, or not indices at all.
  for (json::Value bad : {json::Value(json::Value::Array{0, 9}),
                          json::Value(json::Value::Array{-1}),
                          json::Value(json::Value::Array{1, 1}),
                          json::Value(json::Value::Array{4, 0}),
                          json::Value(json::Value::Array{"0"})})
    EXPECT_TRUE(
        rejects([&](json::Value &v) { v = withAdamWEntry(std::move(v), bad); },
                {"entries.adamw.updated_inputs[",
                 "expected increasing indices of the 9 inputs"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) { v = withAdamWEntry(std::move(v), json::Value(3)); },
      {"entries.adamw.updated_inputs: expected an array of input indices"}));
}

/// A decode entry of batch 2 whose state is one buffer of shape \p shape.
json::Value withDecodeEntry(json::Value value, json::Value shape) {
  json::Value buffer = json::Value::Object{};
  member(buffer, "name") = json::Value("h.0.attn.k_cache");
  member(buffer, "shape") = std::move(shape);
  json::Value decode = json::Value::Object{};
  member(decode, "batch") = 2;
  member(decode, "positions") = 8;
  member(decode, "state") = json::Value(json::Value::Array{std::move(buffer)});
  json::Value entries = json::Value::Object{};
  member(entries, "decode") = std::move(decode);
  member(value, "entries") = std::move(entries);
  return value;
}

TEST(ManifestTest, ReadsTheDecodeStep) {
  EXPECT_FALSE(parse(sampleManifest()).decode.has_value());
  Manifest m = parse(withDecodeEntry(sampleManifest(),
                                     json::Value::Array{2, 2, 8, 4}));
  ASSERT_TRUE(m.decode.has_value());
  EXPECT_EQ(m.decode->batch, 2);
  EXPECT_EQ(m.decode->positions, 8);
  ASSERT_EQ(m.decode->state.size(), 1u);
  EXPECT_EQ(m.decode->state[0].name, "h.0.attn.k_cache");
  EXPECT_EQ(m.decode->state[0].shape, (std::vector<int64_t>{2, 2, 8, 4}));
  EXPECT_EQ(m.decode->state[0].numElements, 128u);
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        v = withDecodeEntry(std::move(v), json::Value::Array{2, 0});
      },
      {"entries.decode.state[0].shape: expected positive integers, got 0"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        v = withDecodeEntry(std::move(v), json::Value::Array{2, 2});
        member(member(member(v, "entries"), "decode"), "state") =
            json::Value("h.0");
      },
      {"entries.decode.state: expected an array"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        v = withDecodeEntry(std::move(v), json::Value::Array{2, 2});
        member(member(member(v, "entries"), "decode"), "batch") = 0;
      },
      {"entries.decode.batch: expected an integer >= 1, got 0"}));
}

TEST(ManifestTest, RejectsABatchWhoseLogitsOverflow) {
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        member(v, "batch") = int64_t(1) << 31;
        member(v, "seq") = int64_t(1) << 31;
      },
      {"batch: the logits of batch 2147483648 x seq 2147483648 x vocab_size "
       "16 floats overflow a 64-bit size"}));
}

TEST(ManifestTest, RejectsMalformedJsonWithItsPosition) {
  EXPECT_TRUE(failsWith([] { parseManifest("{\n  \"format\": }", kPath); },
                        {"pkg/manifest.json:2:13: malformed JSON"}));
  EXPECT_TRUE(failsWith([] { parseManifest("[]", kPath); },
                        {kPath, "expected a JSON object, got an array"}));
}

TEST(ManifestTest, RejectsOtherFormatsAndVersions) {
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "format") = "onnx"; },
                      {"format", "not a mixpkg manifest"}));
  EXPECT_TRUE(rejects([](json::Value &v) { erase(v, "format"); },
                      {"format", "not a mixpkg manifest"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) { member(v, "format_version") = 3; },
      {"format_version", "reads format version 4", "the package has 3"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "format_version") = "1"; },
                      {"format_version", "the package has \"1\""}));
}

TEST(ManifestTest, RejectsBadTopLevelFields) {
  EXPECT_TRUE(
      rejects([](json::Value &v) { erase(v, "batch"); }, {"batch: missing"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "seq") = 0; },
                      {"seq: expected an integer >= 1, got 0"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "batch") = 2.5; },
                      {"batch: expected an integer >= 1, got 2.5"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "target") = "tpu"; },
                      {"target", "\"cpu\" or \"cuda\"", "'tpu'"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "operands") = "fp16"; },
                      {"operands", "\"fp32\" or \"bf16\"", "'fp16'"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "library") = ""; },
                      {"library", "non-empty string"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "params") = 3; },
                      {"params", "expected an array, got a number"}));
}

TEST(ManifestTest, RejectsBadSpecFields) {
  EXPECT_TRUE(
      rejects([](json::Value &v) { erase(member(v, "spec"), "vocab_size"); },
              {"spec.vocab_size: missing"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        member(member(member(v, "spec"), "init"), "seed") = -1;
      },
      {"spec.init.seed: expected an integer >= 0, got -1"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        member(member(member(v, "spec"), "init"), "std") = 0;
      },
      {"spec.init.std: expected a positive number, got 0"}));
  EXPECT_TRUE(rejects([](json::Value &v) { member(v, "spec") = "dense"; },
                      {"spec: expected an object, got a string"}));
}

TEST(ManifestTest, RejectsBadParams) {
  EXPECT_TRUE(rejects([](json::Value &v) { erase(paramAt(v, 0), "name"); },
                      {"params[0].name: missing"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        member(paramAt(v, 0), "shape") =
            json::Value::Array{json::Value(4), json::Value(0)};
      },
      {"params[0] ('wte.weight').shape", "positive integers, got 0"}));
  EXPECT_TRUE(
      rejects([](json::Value &v) { member(paramAt(v, 2), "init") = "xavier"; },
              {"params[2] ('h.0.ln_1.bias').init", "one of normal, uniform",
               "'xavier'"}));
  EXPECT_TRUE(rejects([](json::Value &v) { erase(paramAt(v, 0), "std"); },
                      {"params[0] ('wte.weight').std: missing"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) { member(paramAt(v, 0), "std") = -0.1; },
      {"params[0] ('wte.weight').std: expected a non-negative number"}));
  EXPECT_TRUE(rejects([](json::Value &v) { erase(paramAt(v, 1), "bound"); },
                      {"params[1] ('h.0.mlp.kernels').bound: missing"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        member(paramAt(v, 4), "shape") =
            json::Value::Array{json::Value(3), json::Value(2)};
      },
      {"params[4] ('h.0.altup.predict').init", "identity needs a square matrix",
       "(3, 2)"}));
  EXPECT_TRUE(rejects([](json::Value &v) { erase(paramAt(v, 3), "decay"); },
                      {"params[3] ('h.0.ln_1.weight').decay: missing"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) { member(paramAt(v, 1), "name") = "wte.weight"; },
      {"params[1]", "duplicate parameter 'wte.weight'"}));
  EXPECT_TRUE(rejects(
      [](json::Value &v) {
        member(v, "params").getArray().push_back(json::Value(1));
      },
      {"params[5]: expected an object"}));
}

TEST(ManifestTest, ErrorsGiveTheLine) {
  std::string text = json::write(sampleManifest());
  // Put every key on its own line, as a pretty-printer would.
  std::string pretty;
  for (char c : text) {
    pretty += c;
    if (c == ',')
      pretty += '\n';
  }
  size_t at = pretty.find("\"init\":\"ones\"");
  ASSERT_NE(at, std::string::npos);
  pretty.replace(at, 13, "\"init\":\"twos\"");
  int line = 1 + std::count(pretty.begin(), pretty.begin() + at, '\n');
  EXPECT_TRUE(failsWith([&] { parseManifest(pretty, kPath); },
                        {std::string(kPath) + ":" + std::to_string(line) +
                         ": params[3] ('h.0.ln_1.weight').init"}));
}

TEST(ManifestTest, ReadsAPackageDirectory) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("m.mixpkg"));
  writeBytes(dir.file("m.mixpkg/manifest.json"), json::write(sampleManifest()));
  Manifest m = readManifest(dir.file("m.mixpkg"));
  EXPECT_EQ(m.packagePath, dir.file("m.mixpkg"));
  EXPECT_EQ(m.manifestPath, dir.file("m.mixpkg/manifest.json"));
  EXPECT_EQ(m.params.size(), 5u);
}

TEST(ManifestTest, RejectsWhatIsNotAPackage) {
  TempDir dir;
  EXPECT_TRUE(failsWith([&] { readManifest(dir.file("absent")); },
                        {dir.file("absent"), "not a package directory"}));
  writeBytes(dir.file("file"), "{}");
  EXPECT_TRUE(failsWith([&] { readManifest(dir.file("file")); },
                        {"not a package directory"}));
  EXPECT_TRUE(failsWith([&] { readManifest(dir.path.string()); },
                        {dir.file("manifest.json"), "cannot open"}));
}

} // namespace
