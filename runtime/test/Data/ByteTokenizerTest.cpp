//===- ByteTokenizerTest.cpp - The byte tokenizer and the factory ---------===//
//
// Every byte is its own token and decode inverts encode, for any bytes; the
// factory knows the tokenizer names and rejects others clearly.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Error.h"
#include "mixrt/Tokenizer.h"

#include <gtest/gtest.h>

#include <random>

using namespace mixrt;

TEST(ByteTokenizer, EveryByteIsItsOwnToken) {
  std::string all;
  for (int b = 0; b < 256; ++b)
    all += static_cast<char>(b);
  ByteTokenizer tok;
  EXPECT_EQ(tok.getVocabSize(), 256);
  std::vector<TokenId> ids = tok.encode(all);
  ASSERT_EQ(ids.size(), 256u);
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(ids[b], b);
  EXPECT_EQ(tok.decode(ids), all);
}

TEST(ByteTokenizer, RoundTripsArbitraryBytes) {
  // Invalid UTF-8, NULs and all: bytes are bytes.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  ByteTokenizer tok;
  for (int len : {0, 1, 2, 17, 1000, 65536}) {
    std::string text(len, '\0');
    for (char &c : text)
      c = static_cast<char>(byte(rng));
    EXPECT_EQ(tok.decode(tok.encode(text)), text) << "length " << len;
  }
  EXPECT_EQ(tok.encode("A\xff"), (std::vector<TokenId>{65, 255}));
}

TEST(ByteTokenizer, RejectsIdsOutsideTheVocabulary) {
  ByteTokenizer tok;
  for (TokenId bad : {256, -1}) {
    std::vector<TokenId> ids = {104, 105, bad};
    try {
      tok.decode(ids);
      FAIL() << "decode accepted id " << bad;
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("token id " + std::to_string(bad) +
                                           " at position 2"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(CreateTokenizer, KnowsTheNames) {
  EXPECT_STREQ(createTokenizer("byte")->getName(), "byte");
  EXPECT_THROW(
      {
        try {
          createTokenizer("sentencepiece");
        } catch (const Error &e) {
          EXPECT_STREQ(e.what(), "unknown tokenizer 'sentencepiece' "
                                 "(expected 'byte' or 'gpt2')");
          throw;
        }
      },
      Error);
  EXPECT_THROW(createTokenizer("gpt2"), Error);
}
