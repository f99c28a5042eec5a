//===- CorpusTest.cpp - Loading and tokenizing a corpus file --------------===//
//
// A corpus holds its file's token ids; a missing, empty, undecodable or
// too-short file is a one-line error that names it.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Corpus.h"
#include "mixrt/Error.h"
#include "mixrt/TokenizerGPT2.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

using namespace mixrt;

namespace {

std::string loadError(const std::string &path, const Tokenizer &tok,
                      int64_t seqLen) {
  try {
    Corpus::load(path, tok, seqLen);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

/// The message of the Error \p body throws ("" if none).
template <typename F> std::string errorOf(F &&body) {
  try {
    body();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(Corpus, HoldsTheTokensOfItsFile) {
  test::ScratchDir dir;
  std::string path = dir.file("tiny.txt");
  test::writeFile(path, "hello\n");
  ByteTokenizer bytes;
  Corpus corpus = Corpus::load(path, bytes, 5);
  EXPECT_EQ(corpus.getPath(), path);
  std::vector<TokenId> ids;
  for (size_t i = 0; i < corpus.size(); ++i)
    ids.push_back(corpus.checkToken(i));
  EXPECT_EQ(ids, (std::vector<TokenId>{'h', 'e', 'l', 'l', 'o', '\n'}));
  EXPECT_EQ(corpus.size(), 6u);
}

/// \p values as little-endian unsigned integers of \p width bytes.
std::string packTokens(const std::vector<uint32_t> &values, int width) {
  std::string bytes;
  for (uint32_t v : values)
    for (int b = 0; b < width; ++b)
      bytes.push_back(char((v >> (8 * b)) & 0xFF));
  return bytes;
}

TEST(Corpus, MapsBinaryTokensOfEitherWidth) {
  test::ScratchDir dir;
  std::vector<uint32_t> values = {5, 0, 65535, 300, 7, 12};
  test::writeFile(dir.file("u16.bin"), packTokens(values, 2));
  Corpus narrow = Corpus::map(dir.file("u16.bin"), 2, 3, 65536);
  ASSERT_EQ(narrow.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(narrow.checkToken(i), TokenId(values[i])) << i;
  values[2] = 70000; // needs 32 bits
  test::writeFile(dir.file("u32.bin"), packTokens(values, 4));
  Corpus wide = Corpus::map(dir.file("u32.bin"), 4, 3, 100000);
  ASSERT_EQ(wide.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(wide.checkToken(i), TokenId(values[i])) << i;
  // A copy shares the mapping, which outlives the original.
  Corpus copy = wide;
  wide = Corpus::map(dir.file("u16.bin"), 2, 3, 65536);
  EXPECT_EQ(copy.checkToken(2), TokenId(70000));
}

TEST(Corpus, RefusesBadBinaries) {
  test::ScratchDir dir;
  test::writeFile(dir.file("odd.bin"), std::string(7, '\0'));
  EXPECT_NE(errorOf([&] { Corpus::map(dir.file("odd.bin"), 2, 1, 256); })
                .find("odd.bin: 7 bytes is not a whole number of 2-byte tokens "
                      "(uint16)"),
            std::string::npos);
  test::writeFile(dir.file("short.bin"), packTokens({1, 2, 3}, 2));
  EXPECT_NE(errorOf([&] { Corpus::map(dir.file("short.bin"), 2, 4, 256); })
                .find("short.bin: the corpus has 3 tokens, fewer than one "
                      "sequence needs "
                      "(seq + 1 = 5)"),
            std::string::npos);
  test::writeFile(dir.file("big.bin"), packTokens({1, 2, 256, 3}, 2));
  Corpus big = Corpus::map(dir.file("big.bin"), 2, 2, 256);
  EXPECT_EQ(big.checkToken(1), 2);
  EXPECT_NE(errorOf([&] { big.checkToken(2); })
                .find("big.bin: token 2 is 256, outside the model's vocabulary "
                      "[0, 256)"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              Corpus::map(dir.file("missing.bin"), 2, 1, 256);
            }).find("missing.bin: cannot open: No such file or directory"),
            std::string::npos);
}

TEST(Corpus, NeedsOneSequencePlusItsTarget) {
  test::ScratchDir dir;
  std::string path = dir.file("short.txt");
  test::writeFile(path, "hello\n");
  ByteTokenizer bytes;
  EXPECT_EQ(loadError(path, bytes, 6),
            path + ": the corpus has 6 byte tokens, fewer than one sequence "
                   "needs (seq + 1 = 7)");
  EXPECT_EQ(loadError(path, bytes, 0),
            path + ": the sequence length must be at least 1, not 0");
}

TEST(Corpus, MissingOrEmptyFile) {
  test::ScratchDir dir;
  ByteTokenizer bytes;
  std::string missing = dir.file("missing.txt");
  EXPECT_EQ(loadError(missing, bytes, 4),
            missing + ": cannot open: No such file or directory");
  std::string empty = dir.file("empty.txt");
  test::writeFile(empty, "");
  EXPECT_EQ(loadError(empty, bytes, 4), empty + ": the corpus file is empty");
  EXPECT_EQ(loadError(dir.path, bytes, 4), dir.path + ": not a regular file");
}

TEST(Corpus, InvalidUTF8NamesTheFileAndOffset) {
  test::ScratchDir dir;
  test::writeTinyGPT2(dir.path, {}, {{"a", "b"}});
  auto gpt2 = GPT2Tokenizer::load(dir.path);
  std::string path = dir.file("latin1.txt");
  test::writeFile(path, "na\xefve text\n");
  EXPECT_EQ(loadError(path, *gpt2, 2),
            path + ": invalid UTF-8 at byte offset 2 (byte 0xEF)");
  // The byte tokenizer takes any bytes.
  ByteTokenizer bytes;
  EXPECT_EQ(Corpus::load(path, bytes, 2).size(), 11u);
}
