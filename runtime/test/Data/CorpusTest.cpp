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

} // namespace

TEST(Corpus, HoldsTheTokensOfItsFile) {
  test::ScratchDir dir;
  std::string path = dir.file("tiny.txt");
  test::writeFile(path, "hello\n");
  ByteTokenizer bytes;
  Corpus corpus = Corpus::load(path, bytes, 5);
  EXPECT_EQ(corpus.getPath(), path);
  EXPECT_EQ(corpus.getTokens(),
            (std::vector<TokenId>{'h', 'e', 'l', 'l', 'o', '\n'}));
  EXPECT_EQ(corpus.size(), 6u);
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
