//===- TokenCacheTest.cpp - Text tokenized once into binaries -------------===//
//
// The binaries hold the text's tokens (as tokenizing it in memory gives
// them), in 16 or 32 bits as the vocabulary needs; the cache is reused
// while the files and the tokenizer are unchanged and made again when
// either changes; a cache that cannot be written falls back to the run
// directory's.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TokenCache.h"

#include "mixrt/Corpus.h"
#include "mixrt/Error.h"
#include "mixrt/TokenizerGPT2.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>

using namespace mixrt;

namespace {

/// A tokenizer whose ids need 32 bits: byte b is id 65536 + b.
class WideTokenizer final : public Tokenizer {
public:
  using Tokenizer::decode;
  const char *getName() const override { return "wide"; }
  int32_t getVocabSize() const override { return 65536 + 256; }
  std::vector<TokenId> encode(std::string_view text) const override {
    std::vector<TokenId> ids;
    for (char c : text)
      ids.push_back(65536 + TokenId(static_cast<unsigned char>(c)));
    return ids;
  }
  std::string decode(const TokenId *, size_t) const override { return ""; }
};

std::vector<TokenId> tokensOf(const Corpus &corpus) {
  std::vector<TokenId> ids;
  for (size_t i = 0; i < corpus.size(); ++i)
    ids.push_back(corpus.checkToken(i));
  return ids;
}

/// DIR/data with a short train.txt and val.txt; returns its path.
std::string makeTrainValDir(const test::ScratchDir &dir) {
  std::string data = dir.file("data");
  ::mkdir(data.c_str(), 0755);
  test::writeFile(data + "/train.txt", "The jury said.\nIt did.\n");
  test::writeFile(data + "/val.txt", "Georgia's laws.\n");
  return data;
}

/// Sets MIXRT_TOKEN_CACHE for one scope.
struct CacheSwitch {
  explicit CacheSwitch(const char *value) {
    ::setenv("MIXRT_TOKEN_CACHE", value, 1);
  }
  ~CacheSwitch() { ::unsetenv("MIXRT_TOKEN_CACHE"); }
};

} // namespace

TEST(TokenCache, BinariesHoldTheTextsTokens) {
  test::ScratchDir dir;
  std::string data = makeTrainValDir(dir);
  TextCorpus corpus = findTextCorpus(data);
  ByteTokenizer bytes;
  WideTokenizer wide;
  for (const Tokenizer *tok : {static_cast<const Tokenizer *>(&bytes),
                               static_cast<const Tokenizer *>(&wide)}) {
    std::string out = dir.file(std::string("bins-") + tok->getName());
    TokenBinaries bins = writeTokenBinaries(data, corpus, *tok, out, false);
    EXPECT_EQ(bins.width, tok == &bytes ? 2 : 4);
    EXPECT_EQ(getBinaryTokenWidth(out), bins.width);
    for (auto [part, file, count] :
         {std::tuple{&corpus.train, "/train.bin", bins.trainTokens},
          std::tuple{&corpus.val, "/val.bin", bins.valTokens}}) {
      std::vector<TokenId> expected =
          tokensOf(Corpus::tokenize(*part, *tok, 2));
      Corpus mapped =
          Corpus::map(out + file, bins.width, 2, tok->getVocabSize());
      EXPECT_EQ(tokensOf(mapped), expected) << tok->getName() << file;
      EXPECT_EQ(count, expected.size());
    }
    auto found = findTokenBinaries(out, data, corpus, *tok);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->trainTokens, bins.trainTokens);
  }
}

TEST(TokenCache, IsReusedUntilTheTextOrTheTokenizerChanges) {
  test::ScratchDir dir;
  std::string file = dir.file("corpus.txt");
  std::string text;
  for (int i = 0; i < 40; ++i)
    text += "line " + std::to_string(i) + " of the corpus.\n";
  test::writeFile(file, text);
  ByteTokenizer bytes;
  std::string cache = getTokenCacheDir(file, bytes);
  EXPECT_EQ(cache, dir.path + "/.corpus.txt.mix-tokens/byte");
  {
    // Small texts are tokenized in memory unless the cache is asked for.
    TextCorpus corpus = findTextCorpus(file);
    EXPECT_FALSE(getTokenCache(file, corpus, bytes, "").has_value());
  }
  CacheSwitch on("1");
  TextCorpus corpus = findTextCorpus(file);
  auto made = getTokenCache(file, corpus, bytes, "");
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->dir, cache);
  EXPECT_TRUE(findTokenBinaries(cache, file, corpus, bytes).has_value());

  // Another tokenizer's tokens are not these.
  test::ScratchDir vocab;
  test::writeTinyGPT2(vocab.path, {}, {{"l", "i"}});
  auto gpt2 = GPT2Tokenizer::load(vocab.path);
  EXPECT_FALSE(findTokenBinaries(cache, file, corpus, *gpt2).has_value());
  // Its cache has a directory of its own, named by its vocabulary.
  std::string gpt2Cache = getTokenCacheDir(file, *gpt2);
  EXPECT_EQ(gpt2Cache.rfind(dir.path + "/.corpus.txt.mix-tokens/gpt2-", 0), 0u)
      << gpt2Cache;
  test::ScratchDir vocab2;
  test::writeTinyGPT2(vocab2.path, {}, {{"l", "n"}});
  EXPECT_NE(getTokenCacheDir(file, *GPT2Tokenizer::load(vocab2.path)),
            gpt2Cache);

  // A changed file (its size, or only its time) makes the cache stale, and
  // getTokenCache makes it again.
  test::writeFile(file, text + "one more line.\n");
  TextCorpus changed = findTextCorpus(file);
  EXPECT_FALSE(findTokenBinaries(cache, file, changed, bytes).has_value());
  auto remade = getTokenCache(file, changed, bytes, "");
  ASSERT_TRUE(remade.has_value());
  EXPECT_EQ(remade->trainTokens + remade->valTokens, text.size() + 15);
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, file.c_str(), times, 0), 0);
  EXPECT_FALSE(findTokenBinaries(cache, file, changed, bytes).has_value());

  // A cache with damaged binaries is not used.
  auto again = getTokenCache(file, changed, bytes, "");
  ASSERT_TRUE(again.has_value());
  test::writeFile(cache + "/val.bin", "x");
  EXPECT_FALSE(findTokenBinaries(cache, file, changed, bytes).has_value());
}

TEST(TokenCache, FallsBackWhereTheDataCannotTakeIt) {
  test::ScratchDir dir;
  std::string data = makeTrainValDir(dir);
  // A file where the cache's directory would be: it cannot be made there.
  test::writeFile(data + "/.mix-tokens", "");
  CacheSwitch on("1");
  ByteTokenizer bytes;
  TextCorpus corpus = findTextCorpus(data);
  auto bins = getTokenCache(data, corpus, bytes, dir.file("run/tokens"));
  ASSERT_TRUE(bins.has_value());
  EXPECT_EQ(bins->dir, dir.file("run/tokens/byte"));
  EXPECT_FALSE(getTokenCache(data, corpus, bytes, "").has_value());
}

TEST(TokenCache, SwitchTakesOnlyZeroOrOne) {
  CacheSwitch bad("yes");
  ByteTokenizer bytes;
  TextCorpus corpus;
  std::string message;
  try {
    getTokenCache("data", corpus, bytes, "");
  } catch (const Error &e) {
    message = e.what();
  }
  EXPECT_EQ(message, "MIXRT_TOKEN_CACHE is 'yes', expected 1 (cache the "
                     "tokens of any text corpus) or 0 (of none: tokenize the "
                     "text in memory on every run)");
}
