//===- GPT2TokenizerTest.cpp - BPE merges on a tiny hand-made vocabulary --===//
//
// Merge order, ids, decode and the loader's errors, on vocabularies small
// enough to work out by hand; and a few well-known ids of the real GPT-2.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Error.h"
#include "mixrt/TokenizerGPT2.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

using namespace mixrt;
using Ids = std::vector<TokenId>;

namespace {

/// The message of the Error that \p fn throws, or "" when it throws none.
template <typename Fn> std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

/// Ids 256.. are "lo", "low", "er", " l", " low", "yz", "xy".
std::unique_ptr<GPT2Tokenizer> loadTiny(const test::ScratchDir &dir) {
  test::writeTinyGPT2(dir.path, {"lo", "low", "er", " l", " low", "yz", "xy"},
                      {{"l", "o"},
                       {"lo", "w"},
                       {"e", "r"},
                       {" ", "l"},
                       {" l", "ow"}, // Never applies: "ow" is never made.
                       {"y", "z"},
                       {"x", "y"}});
  return GPT2Tokenizer::load(dir.path);
}

} // namespace

TEST(GPT2Tokenizer, MergesByRankNotByPosition) {
  test::ScratchDir dir;
  auto tok = loadTiny(dir);
  EXPECT_EQ(tok->getVocabSize(), 256 + 7);
  // l o w e r: (l,o) rank 0 -> lo w e r; (lo,w) rank 1 -> low e r;
  // (e,r) rank 2 -> low er.
  EXPECT_EQ(tok->encode("lower"), (Ids{257, 258}));
  // x y z: (y,z) has rank 5 and (x,y) rank 6, so yz wins though it is later.
  EXPECT_EQ(tok->encode("xyz"), (Ids{'x', 261}));
  // " lower": (l,o) rank 0 beats ( ,l) rank 3, so " " never joins "l":
  // " " lo w e r -> " " low er (" low" would need ( l,ow), never formed).
  EXPECT_EQ(tok->encode(" lower"), (Ids{' ', 257, 258}));
  // " l" alone: ( ,l) rank 3.
  EXPECT_EQ(tok->encode(" l"), (Ids{259}));
  // Every occurrence of the chosen pair merges in one step.
  EXPECT_EQ(tok->encode("lolol"), (Ids{256, 256, 'l'}));
  // No merge applies: one token a byte, including non-ASCII bytes.
  EXPECT_EQ(tok->encode("\u00e9"), (Ids{0xC3, 0xA9}));
}

TEST(GPT2Tokenizer, MergesStayInsidePieces) {
  test::ScratchDir dir;
  auto tok = loadTiny(dir);
  // "e'r" is the pieces "e", "'", "r": (e,r) never meets across them.
  EXPECT_EQ(tok->encode("e'r"), (Ids{'e', '\'', 'r'}));
  // "x y" is "x", " y": (x,y) never meets across the pieces.
  EXPECT_EQ(tok->encode("x y"), (Ids{'x', ' ', 'y'}));
}

TEST(GPT2Tokenizer, DecodeInvertsEncode) {
  test::ScratchDir dir;
  auto tok = loadTiny(dir);
  for (std::string text : {"lower lolol xyz", " \n\n\t \u00e9\u4e2d\U0001F600",
                           "", "  trailing  "})
    EXPECT_EQ(tok->decode(tok->encode(text)), text);
  EXPECT_EQ(tok->decode(Ids{257, 258, 259}), "lower l");
  std::string err = errorOf([&] { tok->decode(Ids{1, 263}); });
  EXPECT_EQ(err, "gpt2 tokenizer: token id 263 at position 1 is outside "
                 "[0, 263)");
}

TEST(GPT2Tokenizer, RejectsInvalidUTF8) {
  test::ScratchDir dir;
  auto tok = loadTiny(dir);
  EXPECT_EQ(errorOf([&] { tok->encode("lower \xe2\x82"); }),
            "invalid UTF-8 at byte offset 6 (byte 0xE2)");
}

// gpt-3-encoder looks a pair up as the string "first,second", so the pair
// ("!,", "?") finds the merge ("!", ",?"): both are "!,,?". The real GPT-2
// merge list has 11 such pairs, e.g. ("\",", "\"") and ("\"", ",\"").
TEST(GPT2Tokenizer, CommaKeyQuirkOfTheJavaScriptEncoder) {
  test::ScratchDir dir;
  // (",", "?") last: every symbol of the vocabulary is made by a merge.
  test::writeTinyGPT2(dir.path, {"!,", ",?", "!,?"},
                      {{"!", ","}, {"!", ",?"}, {",", "?"}});
  auto tok = GPT2Tokenizer::load(dir.path);
  // (!,,) rank 0 -> "!," "?"; then ("!,", "?") has the key of rank 1 and
  // merges into "!,?". Python's GPT-2 would stop at "!," "?".
  EXPECT_EQ(tok->encode("!,?"), (Ids{258}));

  // Where the merged symbol is not in the vocabulary, JavaScript emits
  // `undefined`; the C++ tokenizer says so instead.
  test::ScratchDir dir2;
  test::writeTinyGPT2(dir2.path, {"!,", ",?"},
                      {{"!", ","}, {"!", ",?"}, {",", "?"}});
  auto tok2 = GPT2Tokenizer::load(dir2.path);
  EXPECT_TRUE(contains(errorOf([&] { tok2->encode("!,?"); }),
                       "made a symbol that is not in the vocabulary"));
}

TEST(GPT2Tokenizer, LoaderErrorsNameTheFile) {
  test::ScratchDir dir;
  std::string missing = dir.file("nowhere");
  std::string err = errorOf([&] { GPT2Tokenizer::load(missing); });
  EXPECT_TRUE(contains(err, missing + "/encoder.json: cannot open")) << err;
  EXPECT_TRUE(contains(err, "run scripts/fetch-data.sh")) << err;

  // Starts from a good tiny vocabulary and breaks one thing at a time.
  auto withEncoder = [&](const std::string &json) {
    test::writeTinyGPT2(dir.path, {}, {{"a", "b"}});
    test::writeFile(dir.file("encoder.json"), json);
    return errorOf([&] { GPT2Tokenizer::load(dir.path); });
  };
  std::string enc = dir.file("encoder.json");
  EXPECT_TRUE(contains(withEncoder("{\"a\": 0,"), enc + ":1:")) << enc;
  EXPECT_TRUE(contains(withEncoder("[1, 2]"), "expected an object"));
  EXPECT_TRUE(contains(withEncoder("{\"a\": 0, \"b\": -1}"),
                       "the id of 'b' must be an integer in [0, 2)"));
  // An id past the end: the one missing is named (a deleted line).
  EXPECT_TRUE(contains(withEncoder("{\"a\": 0, \"b\": 5}"),
                       enc + ":1: no symbol has id 1, but 'b' has id 5 "
                             "(expected the ids 0..1 of its 2 symbols, each "
                             "once)"));
  EXPECT_TRUE(contains(withEncoder("{\"a\": 0, \"b\": 0}"),
                       "id 0 is given to two symbols"));
  EXPECT_TRUE(contains(withEncoder("{\"a\": 0, \"a\": 1}"),
                       enc + ":1: symbol 'a' appears twice"));
  EXPECT_TRUE(contains(withEncoder("{\"a\": 0, \" \": 1}"),
                       "holds U+0020, which is not in GPT-2's byte alphabet"));
  EXPECT_TRUE(contains(withEncoder("{\"a\": 0}"),
                       enc + ": the vocabulary has no symbol for byte 0"));

  auto withMerges = [&](const std::string &bpe) {
    test::writeTinyGPT2(dir.path, {}, {});
    test::writeFile(dir.file("vocab.bpe"), bpe);
    return errorOf([&] { GPT2Tokenizer::load(dir.path); });
  };
  std::string merges = dir.file("vocab.bpe");
  EXPECT_EQ(withMerges("#version: 0.2\na b\na b c\n"),
            merges + ":3: expected two symbols, found 3");
  EXPECT_EQ(withMerges("#version: 0.2\n"), merges + ": no merges");
  EXPECT_EQ(withMerges(""), merges + ": expected a version line and then "
                                     "one merge a line");
  EXPECT_TRUE(contains(withMerges("#version: 0.2\na \xc2\xa0\n"),
                       merges + ":2: symbol"));

  // A vocabulary symbol no merge makes: vocab.bpe lost its last lines.
  test::writeTinyGPT2(dir.path, {"ab", "cd", "abc"}, {{"a", "b"}, {"c", "d"}});
  test::writeFile(merges, "#version: 0.2\na b\n");
  EXPECT_EQ(errorOf([&] { GPT2Tokenizer::load(dir.path); }),
            merges + ": 2 symbols of " + enc +
                " are made by no merge (the first by id: id 257); is the "
                "file truncated? It has 1 merge line");
  // Added tokens in angle brackets are made by no merge.
  test::writeTinyGPT2(dir.path, {"ab", "<pad>", "<|endoftext|>"}, {{"a", "b"}});
  EXPECT_EQ(GPT2Tokenizer::load(dir.path)->encode("ab"), (Ids{256}));
}

TEST(GPT2Tokenizer, MergeAfterTheLastNewlineIsIgnored) {
  // gpt-3-encoder drops the text after the last newline of vocab.bpe.
  test::ScratchDir dir;
  // Were "c d" a merge, encoding "cd" would fail: "cd" is no symbol.
  test::writeTinyGPT2(dir.path, {"ab"}, {{"a", "b"}});
  test::writeFile(dir.file("vocab.bpe"), "#version: 0.2\na b\nc d");
  auto tok = GPT2Tokenizer::load(dir.path);
  EXPECT_EQ(tok->encode("ab"), (Ids{256}));
  EXPECT_EQ(tok->encode("cd"), (Ids{'c', 'd'}));
}

// Ids of the real GPT-2 vocabulary that are widely published.
TEST(GPT2Tokenizer, RealVocabularyKnownIds) {
  const char *dataDir = std::getenv("MIX_DATA_DIR");
  std::string gpt2 =
      std::string(dataDir && *dataDir ? dataDir : MIXRT_DEFAULT_DATA_DIR) +
      "/gpt2";
  struct stat st;
  if (::stat((gpt2 + "/encoder.json").c_str(), &st) != 0)
    GTEST_SKIP() << gpt2 << "/encoder.json is missing: the data has not been "
                 << "fetched (run scripts/fetch-data.sh)";
  auto tok = GPT2Tokenizer::load(gpt2);
  EXPECT_EQ(tok->getVocabSize(), 50257);
  EXPECT_EQ(tok->encode("Hello world"), (Ids{15496, 995}));
  EXPECT_EQ(tok->decode(Ids{50256}), "<|endoftext|>");
  // The text "<|endoftext|>" is not the special token.
  EXPECT_NE(tok->encode("<|endoftext|>"), (Ids{50256}));
}
