//===- TextCorpusTest.cpp - Text corpora split and tokenized in chunks ----===//
//
// Cutting a text into chunks never changes its tokens: every cut that
// findChunkCut allows splits GPT-2's pre-tokenization of the whole into the
// pieces of the halves. The split of a file and of a directory of files is
// the documented one, and errors name the file and the offset in it.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TextCorpus.h"

#include "mixrt/Corpus.h"
#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/TokenizerGPT2.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace mixrt;

namespace {

using test::gpt2Pieces;

/// Text with the white space and punctuation around line breaks that GPT-2's
/// pre-tokenizer treats specially: runs of spaces before and after a break,
/// blank lines, contractions, digits, CRLF and non-ASCII letters.
std::string trickyText() {
  std::string text;
  const char *lines[] = {
      "The jury said it did find that many of Georgia's registration",
      "  and election laws \"are outmoded\".  ",
      "",
      "'ll 've 're it's 1961 -- 3.5%",
      "\t tabs\tand  spaces  ",
      "caf\xc3\xa9 na\xc3\xafve \xe4\xb8\xad\xe6\x96\x87\xe3\x80\x80wide",
      "end\r",
      "x",
      "\xc2\xa0nbsp-start",
      "(parens)",
      "",
      "",
      "last line"};
  for (int round = 0; round < 3; ++round)
    for (const char *line : lines)
      text += std::string(line) + "\n";
  return text;
}

std::string readInput(const std::string &name) {
  std::ifstream in(std::string(MIXRT_DATA_TEST_DIR) +
                   "/../../../test/Runtime/Inputs/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST(TextCorpus, ChunkCutsKeepGPT2Pieces) {
  std::string text = trickyText() + readInput("corpus/val.txt").substr(0, 800);
  std::vector<std::string> whole = gpt2Pieces(text);
  int cuts = 0;
  for (size_t length = 1; length <= text.size(); ++length) {
    size_t cut = findChunkCut(std::string_view(text).substr(0, length));
    if (cut == 0)
      continue;
    ASSERT_LT(cut, length);
    ASSERT_NE(std::string(" \t\n\v\f\r").find(text[cut]), std::string::npos);
    std::vector<std::string> halves = gpt2Pieces(text.substr(0, cut));
    for (std::string &p : gpt2Pieces(text.substr(cut)))
      halves.push_back(p);
    ASSERT_EQ(halves, whole) << "cut at " << cut;
    ++cuts;
  }
  EXPECT_GT(cuts, 100); // the test cut the text in many places
}

TEST(TextCorpus, ChunkCutIsBeforeSpaceAfterNonSpace) {
  EXPECT_EQ(findChunkCut("ab cd"), 2u);
  EXPECT_EQ(findChunkCut("ab\ncd ef"), 5u);      // the last cut
  EXPECT_EQ(findChunkCut("ab  cd"), 2u);         // not inside the run
  EXPECT_EQ(findChunkCut("x\r\ny"), 1u);         // CRLF text
  EXPECT_EQ(findChunkCut("\xe3\x80\x82\n"), 3u); // after U+3002
  EXPECT_EQ(findChunkCut("\xe3\x80\x80\n"), 0u); // after U+3000, a space
  EXPECT_EQ(findChunkCut("\xc2\xa0 a"), 0u);     // after U+00A0, a space
  EXPECT_EQ(findChunkCut("\xff a"), 0u);         // not UTF-8
  EXPECT_EQ(findChunkCut(" abc"), 0u);
  EXPECT_EQ(findChunkCut("abc"), 0u);
  EXPECT_EQ(findChunkCut(""), 0u);
}

TEST(TextCorpus, TokenizesInChunksAsAWhole) {
  test::ScratchDir dir;
  test::writeTinyGPT2(dir.path, {"Th", "The", " t", "\n\n"},
                      {{"T", "h"}, {"Th", "e"}, {" ", "t"}, {"\n", "\n"}});
  auto gpt2 = GPT2Tokenizer::load(dir.path);
  ByteTokenizer bytes;
  std::string text = trickyText() + readInput("corpus/train.txt");
  std::string path = dir.file("text.txt");
  test::writeFile(path, text);
  TextPart part{path, {{path, 5, text.size() - 7}}};
  for (const Tokenizer *tok : {static_cast<const Tokenizer *>(&bytes),
                               static_cast<const Tokenizer *>(gpt2.get())}) {
    std::vector<TokenId> expected =
        tok->encode(std::string_view(text).substr(5, text.size() - 12));
    for (size_t chunk : {size_t(1), size_t(7), size_t(100), size_t(1) << 20}) {
      std::vector<TokenId> got;
      int calls = 0;
      tokenizeText(
          part, *tok,
          [&](const std::vector<TokenId> &ids) {
            got.insert(got.end(), ids.begin(), ids.end());
            ++calls;
          },
          nullptr, chunk);
      EXPECT_EQ(got, expected) << tok->getName() << " chunk " << chunk;
      if (chunk == 100)
        EXPECT_GT(calls, 10);
    }
  }
}

TEST(TextCorpus, InvalidUTF8IsNamedAtItsOffsetInTheFile) {
  test::ScratchDir dir;
  test::writeTinyGPT2(dir.path, {}, {{"a", "b"}});
  auto gpt2 = GPT2Tokenizer::load(dir.path);
  std::string text;
  for (int i = 0; i < 50; ++i)
    text += "line\n";
  text += "bad \xff byte\n";
  std::string path = dir.file("t.txt");
  test::writeFile(path, text);
  std::string message;
  try {
    tokenizeText(
        {path, {{path, 0, text.size()}}}, *gpt2,
        [](const std::vector<TokenId> &) {}, nullptr, 16);
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_EQ(message, path + ": invalid UTF-8 at byte offset 254 (byte 0xFF)");
}

TEST(TextCorpus, ValidationCutOfAFile) {
  test::ScratchDir dir;
  auto cutOf = [&](const std::string &text) {
    test::writeFile(dir.file("f.txt"), text);
    return getValidationCut(InputFile(dir.file("f.txt")));
  };
  // 100 bytes: 90% is byte 90; the first line break at or after it ends
  // the training part.
  std::string lines(95, 'a');
  lines[92] = '\n';
  lines += "bcde\n";
  EXPECT_EQ(cutOf(lines), 93u);
  // A break that ends the file leaves nothing after it: the cut stays at
  // 90%, moved back to the start of a UTF-8 character.
  std::string noBreak(89, 'a');
  noBreak += "\xc3\xa9\xc3\xa9";
  noBreak += std::string(100 - noBreak.size() - 1, 'b') + "\n";
  EXPECT_EQ(cutOf(noBreak), 89u); // byte 90 is inside the first é
  EXPECT_EQ(cutOf("x"), 1u);
}

TEST(TextCorpus, SplitsADirectoryByFile) {
  // The names' FNV-1a 64 hashes, 0 mod 10 for f01, f05, f09 and f27
  // (computed in Python: hash(b) = ((hash ^ b) * 0x100000001b3) mod 2^64
  // from 0xcbf29ce484222325).
  for (const char *name : {"f01.txt", "f05.txt", "f09.txt", "f27.txt"})
    EXPECT_TRUE(isValidationFile(name)) << name;
  for (const char *name : {"f00.txt", "f02.txt", "f10.txt", "a.txt"})
    EXPECT_FALSE(isValidationFile(name)) << name;

  test::ScratchDir dir;
  ::mkdir(dir.file("sub").c_str(), 0755);
  ::mkdir(dir.file(".hidden").c_str(), 0755);
  for (int i = 0; i < 12; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "%sf%02d.txt", i < 6 ? "" : "sub/", i);
    test::writeFile(dir.file(name), "text\n");
  }
  test::writeFile(dir.file("f27.txt"), "text\n");
  test::writeFile(dir.file("notes.md"), "not text\n");
  test::writeFile(dir.file(".hidden/f05.txt"), "hidden\n");
  TextCorpus corpus = findTextCorpus(dir.path);
  // Sorted by relative path: f00..f05, f27, then sub/f06..sub/f11; f01,
  // f05 and f27 validate (sub/f09 is not f09).
  ASSERT_EQ(corpus.val.ranges.size(), 3u);
  EXPECT_EQ(corpus.val.ranges[0].path, dir.file("f01.txt"));
  EXPECT_EQ(corpus.val.ranges[2].path, dir.file("f27.txt"));
  EXPECT_EQ(corpus.val.name, dir.path + " (its 3 validation files)");
  EXPECT_EQ(corpus.train.ranges.size(), 10u);
  EXPECT_EQ(corpus.train.ranges[0].path, dir.file("f00.txt"));
  EXPECT_EQ(corpus.train.name, dir.path + " (its 10 training files)");

  // Another file moves no other file between the parts.
  test::writeFile(dir.file("f10.txt"), "text\n");
  TextCorpus more = findTextCorpus(dir.path);
  EXPECT_EQ(more.val.ranges.size(), 3u);
  EXPECT_EQ(more.train.ranges.size(), 11u);

  // When the hash picks none, the last file validates.
  test::ScratchDir few;
  test::writeFile(few.file("b.txt"), "b\n");
  test::writeFile(few.file("a.txt"), "a\n");
  TextCorpus two = findTextCorpus(few.path);
  EXPECT_EQ(two.train.ranges[0].path, few.file("a.txt"));
  EXPECT_EQ(two.val.ranges[0].path, few.file("b.txt"));

  test::ScratchDir one;
  test::writeFile(one.file("a.txt"), "a\n");
  std::string message;
  try {
    findTextCorpus(one.path);
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_NE(message.find(one.path + ": a directory of text files needs at "
                                    "least two *.txt files (one to validate "
                                    "on), found 1"),
            std::string::npos)
      << message;
}
