//===- SafetensorsTest.cpp - Tests of the safetensors reader and writer ---===//
//
// Hand-assembled files check the reader against the format itself; the
// writer's files are read back and taken apart byte by byte; every kind of
// malformed file is crafted and must fail with a message naming the file
// and the tensor.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Safetensors.h"

#include "TestUtil.h"

#include <cstdio>
#include <cstring>

using namespace mixrt;
using mixrt::test::failsWith;
using mixrt::test::le64;
using mixrt::test::readBytes;
using mixrt::test::TempDir;
using mixrt::test::writeBytes;

namespace {

/// The raw bytes of \p values.
template <typename T> std::string raw(std::initializer_list<T> values) {
  std::string out;
  for (T value : values)
    out.append(reinterpret_cast<const char *>(&value), sizeof(T));
  return out;
}

/// A safetensors file: length, header, data.
std::string assemble(const std::string &header, const std::string &data) {
  return le64(header.size()) + header + data;
}

class SafetensorsTest : public ::testing::Test {
protected:
  /// Writes \p bytes to a file and returns its path.
  std::string file(const std::string &bytes) {
    std::string path = dir.file("t.safetensors");
    writeBytes(path, bytes);
    return path;
  }
  /// Reads a file holding \p bytes, expecting an error with \p parts
  /// (and the file's path).
  ::testing::AssertionResult rejects(const std::string &bytes,
                                     std::initializer_list<std::string> parts) {
    std::string path = file(bytes);
    auto result = failsWith([&] { readSafetensors(path); }, parts);
    if (!result)
      return result;
    return failsWith([&] { readSafetensors(path); }, {path + ": "});
  }
  TempDir dir;
};

TEST_F(SafetensorsTest, ReadsAHandAssembledFile) {
  // Written by hand from the format description, with the space padding
  // Python writers add.
  std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("b":{"dtype":"I64","shape":[2],"data_offsets":[8,24]},)"
      R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("c":{"dtype":"I32","shape":[],"data_offsets":[24,28]},)"
      R"("d":{"dtype":"F64","shape":[1,1],"data_offsets":[28,36]},)"
      R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[36,36]}}   )";
  std::string data = raw<float>({1.5f, -2.0f}) + raw<int64_t>({-7, 1LL << 40}) +
                     raw<int32_t>({123}) + raw<double>({0.1});
  TensorFile tensors = readSafetensors(file(assemble(header, data)));

  ASSERT_EQ(tensors.getTensors().size(), 5u);
  EXPECT_EQ(tensors.getTensors()[0].name, "b"); // header order
  ASSERT_EQ(tensors.metadata.size(), 1u);
  EXPECT_EQ(tensors.metadata[0].first, "format");
  EXPECT_EQ(tensors.metadata[0].second, "pt");

  const Tensor *a = tensors.find("a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(a->getData<float>()[0], 1.5f);
  EXPECT_EQ(a->getData<float>()[1], -2.0f);
  EXPECT_EQ(tensors.find("b")->getData<int64_t>()[1], 1LL << 40);
  EXPECT_EQ(tensors.find("c")->getNumElements(), 1);
  EXPECT_EQ(tensors.find("c")->getData<int32_t>()[0], 123);
  EXPECT_EQ(tensors.find("d")->getData<double>()[0], 0.1);
  EXPECT_EQ(tensors.find("e")->getNumElements(), 0);
  EXPECT_EQ(tensors.find("f"), nullptr);
}

TEST_F(SafetensorsTest, WriterLaysOutTheFormat) {
  TensorFile tensors;
  tensors.metadata.push_back({"note", "x"});
  tensors.add("w", Tensor::create<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  tensors.add("ids", Tensor::create<int32_t>({3}, {7, 8, 9}));
  tensors.add("loss", Tensor::create<double>({}, {2.5}));
  tensors.add("big", Tensor::create<int64_t>({1}, {-(1LL << 50)}));
  std::string path = dir.file("w.safetensors");
  writeSafetensors(path, tensors);

  // Take the bytes apart independently of the reader.
  std::string bytes = readBytes(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ(n % 8, 0u) << "header padded to 8 bytes";
  std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.find("{\"__metadata__\":{\"note\":\"x\"},"), 0u) << header;
  EXPECT_NE(
      header.find(R"("w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]})"),
      std::string::npos)
      << header;
  EXPECT_NE(header.find(
                R"("ids":{"dtype":"I32","shape":[3],"data_offsets":[24,36]})"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find(
                R"("loss":{"dtype":"F64","shape":[],"data_offsets":[36,44]})"),
            std::string::npos)
      << header;
  std::string data = bytes.substr(8 + n);
  EXPECT_EQ(data, raw<float>({1, 2, 3, 4, 5, 6}) + raw<int32_t>({7, 8, 9}) +
                      raw<double>({2.5}) + raw<int64_t>({-(1LL << 50)}));

  // And the round trip.
  TensorFile back = readSafetensors(path);
  ASSERT_EQ(back.getTensors().size(), 4u);
  for (const NamedTensor &named : tensors.getTensors()) {
    const Tensor *tensor = back.find(named.name);
    ASSERT_TRUE(tensor) << named.name;
    EXPECT_EQ(tensor->dtype, named.tensor.dtype);
    EXPECT_EQ(tensor->shape, named.tensor.shape);
    EXPECT_EQ(tensor->data, named.tensor.data);
  }
  EXPECT_EQ(back.metadata, tensors.metadata);
}

TEST_F(SafetensorsTest, WritesAnEmptyFile) {
  std::string path = dir.file("empty.safetensors");
  writeSafetensors(path, TensorFile());
  EXPECT_EQ(readBytes(path), le64(8) + "{}      ");
  EXPECT_TRUE(readSafetensors(path).getTensors().empty());
}

TEST_F(SafetensorsTest, RejectsTruncatedLength) {
  EXPECT_TRUE(
      rejects(std::string("\x08\0\0", 3), {"file is truncated", "3 bytes"}));
  EXPECT_TRUE(rejects("", {"file is truncated", "0 bytes"}));
}

TEST_F(SafetensorsTest, RejectsHeaderLengthPastTheEnd) {
  EXPECT_TRUE(
      rejects(le64(100) + "{}",
              {"header length 100 runs past the end of the file", "10 bytes"}));
  EXPECT_TRUE(rejects(le64(~0ull) + "{}", {"runs past the end"}));
}

TEST_F(SafetensorsTest, RejectsMalformedHeaderJson) {
  EXPECT_TRUE(rejects(assemble("{\"a\":", ""),
                      {"malformed header JSON", "line 1, column 6"}));
  EXPECT_TRUE(rejects(assemble("[]", ""),
                      {"malformed header", "expected a JSON object"}));
  EXPECT_TRUE(rejects(assemble("", ""), {"malformed header JSON"}));
}

TEST_F(SafetensorsTest, RejectsUnknownAndUnsupportedDtypes) {
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"Q7","shape":[1],"data_offsets":[0,4]}})",
               raw<float>({1})),
      {"tensor 'x'", "unknown dtype 'Q7'"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})",
               raw<float>({1})),
      {"tensor 'x'", "unsupported dtype 'BF16'", "F32, F64, I32, I64"}));
  EXPECT_TRUE(
      rejects(assemble(R"({"x":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})",
                       raw<float>({1})),
              {"tensor 'x'", "dtype must be a string"}));
}

TEST_F(SafetensorsTest, RejectsShapeThatDisagreesWithOffsets) {
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
               raw<float>({1, 2})),
      {"tensor 'x'", "shape (3,) of F32 needs 12 bytes",
       "data_offsets [0, 8] hold 8"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})",
               raw<float>({1})),
      {"tensor 'x'", "non-negative integers"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})",
               raw<float>({1})),
      {"tensor 'x'", "non-negative integers"}));
  EXPECT_TRUE(
      rejects(assemble(R"({"x":{"dtype":"F32","shape":[4294967296,4294967296],)"
                       R"("data_offsets":[0,4]}})",
                       raw<float>({1})),
              {"tensor 'x'", "too many elements"}));
}

TEST_F(SafetensorsTest, RejectsOffsetsOutOfRange) {
  // The header promises 16 bytes; the file holds 8: truncated.
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"F64","shape":[2],"data_offsets":[0,16]}})",
               raw<double>({1})),
      {"tensor 'x'",
       "data_offsets [0, 16] run past the end of the data (8 "
       "bytes)",
       "truncated"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})",
               raw<double>({1})),
      {"tensor 'x'", "end before they begin"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0]}})",
               raw<float>({1})),
      {"tensor 'x'", "data_offsets must be an array [begin, end]"}));
}

TEST_F(SafetensorsTest, RejectsATruncatedDataSection) {
  // A valid file with its last bytes cut off.
  TensorFile tensors;
  tensors.add("a", Tensor::create<float>({2}, {1, 2}));
  tensors.add("b", Tensor::create<float>({4}, {1, 2, 3, 4}));
  std::string path = dir.file("full.safetensors");
  writeSafetensors(path, tensors);
  std::string bytes = readBytes(path);
  EXPECT_TRUE(
      rejects(bytes.substr(0, bytes.size() - 3),
              {"tensor 'b'", "run past the end of the data", "truncated"}));
}

TEST_F(SafetensorsTest, RejectsOverlapsGapsAndTrailingBytes) {
  EXPECT_TRUE(rejects(
      assemble(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
               raw<float>({1, 2, 3})),
      {"tensors 'a' and 'b' overlap", "[0, 8] and [4, 12]"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
               R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
               raw<float>({1, 2, 3})),
      {"tensor 'b'", "leave bytes [4, 8) unused"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
               raw<float>({1, 2})),
      {"4 bytes after the last tensor's data"}));
}

TEST_F(SafetensorsTest, RejectsDuplicateNames) {
  EXPECT_TRUE(rejects(
      assemble(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
               R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
               raw<float>({1, 2})),
      {"duplicate tensor 'a'"}));
  EXPECT_TRUE(rejects(assemble(R"({"__metadata__":{},"__metadata__":{}})", ""),
                      {"duplicate __metadata__"}));
}

TEST_F(SafetensorsTest, RejectsMalformedEntries) {
  EXPECT_TRUE(rejects(assemble(R"({"a":[]})", ""),
                      {"tensor 'a'", "expected an object"}));
  EXPECT_TRUE(
      rejects(assemble(R"({"a":{"dtype":"F32","shape":[1]}})", raw<float>({1})),
              {"tensor 'a'", "missing data_offsets"}));
  EXPECT_TRUE(rejects(
      assemble(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],)"
               R"("extra":1}})",
               raw<float>({1})),
      {"tensor 'a'", "unexpected key 'extra'"}));
  EXPECT_TRUE(rejects(assemble(R"({"__metadata__":{"k":1}})", ""),
                      {"__metadata__", "'k' must be a string"}));
  EXPECT_TRUE(rejects(assemble(R"({"__metadata__":[]})", ""),
                      {"__metadata__ must be an object of strings"}));
}

TEST_F(SafetensorsTest, RejectsMissingFiles) {
  std::string path = dir.file("absent.safetensors");
  EXPECT_TRUE(failsWith([&] { readSafetensors(path); }, {path, "cannot open"}));
}

TEST_F(SafetensorsTest, WriterChecksItsInput) {
  TensorFile tensors;
  tensors.add("w", Tensor::create<float>({2}, {1, 2}));
  EXPECT_TRUE(
      failsWith([&] { tensors.add("w", Tensor()); }, {"duplicate tensor 'w'"}));
  EXPECT_TRUE(
      failsWith([&] { tensors.add("__metadata__", Tensor()); }, {"reserved"}));
  Tensor bad = Tensor::create<float>({2}, {1, 2});
  bad.shape = {3};
  tensors.add("bad", bad);
  std::string path = dir.file("bad.safetensors");
  EXPECT_TRUE(failsWith([&] { writeSafetensors(path, tensors); },
                        {path, "tensor 'bad'", "needs 12 bytes, has 8"}));
  EXPECT_TRUE(dir.list().empty());
}

TEST_F(SafetensorsTest, FailedWriteKeepsThePreviousFile) {
  std::string path = dir.file("p.safetensors");
  TensorFile first;
  first.add("w", Tensor::create<float>({1}, {1}));
  writeSafetensors(path, first);
  std::string before = readBytes(path);
  // Writing into a directory that does not exist fails before touching
  // anything; a tensor with inconsistent data fails before writing.
  std::string elsewhere = dir.file("missing/p.safetensors");
  EXPECT_TRUE(
      failsWith([&] { writeSafetensors(elsewhere, first); }, {elsewhere}));
  TensorFile broken;
  broken.add("w", Tensor::create<float>({1}, {2}));
  broken.add("x", Tensor{DType::F32, {4}, {}});
  EXPECT_THROW(writeSafetensors(path, broken), Error);
  EXPECT_EQ(readBytes(path), before);
  EXPECT_EQ(dir.list(), std::vector<std::string>{"p.safetensors"});
}

//===----------------------------------------------------------------------===//
// Checksums
//===----------------------------------------------------------------------===//

/// FNV-1a 64, written out again for the tests.
uint64_t referenceFnv1a(const std::string &bytes) {
  uint64_t h = UINT64_C(14695981039346656037);
  for (unsigned char c : bytes)
    h = (h ^ c) * UINT64_C(1099511628211);
  return h;
}

/// The checksum of \p bytes by the rule of Safetensors.h, found by hand:
/// the 16 characters after \p before (the key, a colon and a quote) set
/// to '0'; "" if \p before is missing.
std::string referenceChecksum(std::string bytes,
                              const std::string &before = std::string("\"") +
                                                          kChecksumKey +
                                                          "\":\"") {
  size_t at = bytes.find(before);
  if (at == std::string::npos)
    return "";
  bytes.replace(at + before.size(), 16, 16, '0');
  char digits[17];
  std::snprintf(digits, sizeof digits, "%016llx",
                static_cast<unsigned long long>(referenceFnv1a(bytes)));
  return digits;
}

TensorFile checksummedSample() {
  TensorFile tensors;
  tensors.metadata.push_back({"step", "7"});
  tensors.add("w", Tensor::create<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  tensors.add("ids", Tensor::create<int32_t>({3}, {7, 8, 9}));
  return tensors;
}

TEST_F(SafetensorsTest, WritesAndChecksAChecksum) {
  std::string path = dir.file("c.safetensors");
  writeSafetensors(path, checksummedSample(), /*addChecksum=*/true);
  std::string bytes = readBytes(path);
  size_t at = bytes.find(std::string("\"") + kChecksumKey + "\":\"");
  ASSERT_NE(at, std::string::npos) << bytes;
  std::string stored = bytes.substr(at + std::strlen(kChecksumKey) + 4, 16);
  EXPECT_EQ(stored, referenceChecksum(bytes));
  // Last in the metadata, after what the caller gave.
  EXPECT_NE(bytes.find("{\"__metadata__\":{\"step\":\"7\",\"" +
                       std::string(kChecksumKey)),
            std::string::npos)
      << bytes;

  TensorFile read = readSafetensors(path);
  ASSERT_EQ(read.metadata.size(), 2u);
  EXPECT_EQ(read.metadata[1],
            (std::pair<std::string, std::string>(kChecksumKey, stored)));
  EXPECT_EQ(read.find("ids")->getData<int32_t>()[2], 9);

  // Written back, a stale checksum is never copied: dropped without
  // addChecksum, recomputed (to the same value here) with it.
  std::string plain = dir.file("plain.safetensors");
  writeSafetensors(plain, read);
  EXPECT_EQ(readBytes(plain).find(kChecksumKey), std::string::npos);
  std::string again = dir.file("again.safetensors");
  writeSafetensors(again, read, /*addChecksum=*/true);
  EXPECT_EQ(readBytes(again), bytes);
}

TEST_F(SafetensorsTest, EveryFlippedBitIsRefused) {
  std::string path = dir.file("c.safetensors");
  writeSafetensors(path, checksummedSample(), /*addChecksum=*/true);
  std::string bytes = readBytes(path);
  size_t keyBegin = bytes.find(kChecksumKey);
  size_t keyEnd = keyBegin + std::strlen(kChecksumKey);
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit : {0, 5}) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      std::string copy = file(flipped);
      if (i < keyBegin || i >= keyEnd) {
        EXPECT_THROW(readSafetensors(copy), Error)
            << "byte " << i << " bit " << bit;
        continue;
      }
      // A flip in the key's name leaves a file without a checksum, which
      // whoever needs one refuses (checkpoints do, by their format).
      try {
        TensorFile read = readSafetensors(copy);
        for (const auto &entry : read.metadata)
          EXPECT_NE(entry.first, kChecksumKey);
      } catch (const Error &) {
      }
    }
  // A data byte: the checksum names the file and the expected value.
  std::string flipped = bytes;
  flipped.back() ^= 1;
  EXPECT_TRUE(rejects(flipped, {"the file is corrupt: its FNV-1a 64 checksum "
                                "is ",
                                ", expected " + referenceChecksum(bytes),
                                "(__metadata__ 'checksum_fnv1a64')"}));
}

TEST_F(SafetensorsTest, ReadsChecksumsOtherWritersPlace) {
  // JSON whitespace around the colon, as Python's json.dumps writes it.
  std::string header = std::string(R"({"__metadata__": {")") + kChecksumKey +
                       R"(": "0000000000000000"}, )" +
                       R"("a": {"dtype": "F32", "shape": [1], )" +
                       R"("data_offsets": [0, 4]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string bytes = assemble(header, raw<float>({3.0f}));
  std::string before = std::string("\"") + kChecksumKey + "\": \"";
  std::string sum = referenceChecksum(bytes, before);
  ASSERT_EQ(sum.size(), 16u);
  bytes.replace(bytes.find(before) + before.size(), 16, sum);
  EXPECT_EQ(readSafetensors(file(bytes)).find("a")->getData<float>()[0], 3.0f);
}

TEST_F(SafetensorsTest, RejectsChecksumsThatCannotBeChecked) {
  std::string data = raw<float>({1.0f});
  std::string entry = R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]})";
  auto withMetadata = [&](const std::string &metadata) {
    return assemble("{\"__metadata__\":{" + metadata + "}," + entry + "}",
                    data);
  };
  std::string key = std::string("\"") + kChecksumKey + "\":";
  EXPECT_TRUE(rejects(withMetadata(key + "\"0123456789ABCDEF\""),
                      {"__metadata__ 'checksum_fnv1a64' is "
                       "'0123456789ABCDEF', expected 16 lowercase hex "
                       "digits"}));
  EXPECT_TRUE(rejects(withMetadata(key + "\"12\""), {"expected 16"}));
  // Duplicate keys (legal JSON) or an escaped spelling: not where a reader
  // can find it.
  EXPECT_TRUE(rejects(withMetadata(key + "\"0000000000000000\"," + key +
                                   "\"0000000000000000\""),
                      {"must appear once in the header"}));
  EXPECT_TRUE(
      rejects(withMetadata("\"checksum\\u005ffnv1a64\":\"0000000000000000\""),
              {"must appear once in the header"}));
}

TEST(TensorTest, TypedAccessChecksTheDtype) {
  Tensor t = Tensor::create<int32_t>({2}, {1, 2});
  EXPECT_EQ(t.getData<int32_t>()[1], 2);
  EXPECT_TRUE(
      failsWith([&] { t.getData<float>(); }, {"tensor holds I32, not F32"}));
  EXPECT_TRUE(failsWith(
      [] {
        Tensor::create<float>({2, 2}, {1, 2, 3});
      },
      {"shape (2, 2) given 3 values"}));
}

TEST(TensorTest, FormatsShapes) {
  EXPECT_EQ(formatShape({}), "()");
  EXPECT_EQ(formatShape({5}), "(5,)");
  EXPECT_EQ(formatShape({2, 8}), "(2, 8)");
}

} // namespace
