//===- GPT2PreTokenizerTest.cpp - GPT-2's regex split, by hand ------------===//
//
// Pieces worked out by hand from the regex's alternation order and the
// backtracking of \s+(?!\S), and the rejection of invalid UTF-8.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Error.h"
#include "mixrt/TokenizerGPT2.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

using namespace mixrt;

namespace {

std::vector<std::string> split(std::string_view text) {
  return test::gpt2Pieces(text);
}

using Pieces = std::vector<std::string>;

} // namespace

TEST(GPT2PreTokenizer, WordsTakeTheSpaceBeforeThem) {
  EXPECT_EQ(split("Hello world"), (Pieces{"Hello", " world"}));
  EXPECT_EQ(split(""), Pieces{});
  EXPECT_EQ(split("abc123def"), (Pieces{"abc", "123", "def"}));
  EXPECT_EQ(split(" 42 apples"), (Pieces{" 42", " apples"}));
  EXPECT_EQ(split("$100!! ?!"), (Pieces{"$", "100", "!!", " ?!"}));
}

// Letters and digits assigned in Unicode 16.0 and 17.0 join words and
// numbers as older ones do: the pre-tokenizer is pinned to Unicode 17.0.
TEST(GPT2PreTokenizer, RecentCodePointsByTheirUnicode17Classes) {
  // U+1C89 (Cyrillic capital tje) and U+0C5C (a Telugu letter) are letters;
  // U+1CCF0 and U+1CCF1 (outlined digits) are numbers.
  EXPECT_EQ(split("x\u1C89y \u0C5Cz \U0001CCF0\U0001CCF1!"),
            (Pieces{"x\u1C89y", " \u0C5Cz", " \U0001CCF0\U0001CCF1", "!"}));
}

TEST(GPT2PreTokenizer, Contractions) {
  EXPECT_EQ(split("I'm here, aren't you?"),
            (Pieces{"I", "'m", " here", ",", " aren", "'t", " you", "?"}));
  EXPECT_EQ(
      split("they'll've we'd she's you're"),
      (Pieces{"they", "'ll", "'ve", " we", "'d", " she", "'s", " you", "'re"}));
  // Only lower case, and a contraction is not found inside a punctuation run.
  EXPECT_EQ(split("'S 'Re"), (Pieces{"'", "S", " '", "Re"}));
  EXPECT_EQ(split("''s"), (Pieces{"''", "s"}));
  EXPECT_EQ(split("'''"), (Pieces{"'''"}));
  EXPECT_EQ(split("it's'"), (Pieces{"it", "'s", "'"}));
  EXPECT_EQ(split("'sup"), (Pieces{"'s", "up"}));
  EXPECT_EQ(split("'l 'r"), (Pieces{"'", "l", " '", "r"}));
}

TEST(GPT2PreTokenizer, WhiteSpaceRuns) {
  // A run before a word gives its last space to the word.
  EXPECT_EQ(split("a  b"), (Pieces{"a", " ", " b"}));
  EXPECT_EQ(split("a   b"), (Pieces{"a", "  ", " b"}));
  // \s+(?!\S) leaves the run's last code point, which is not a space that
  // can lead the word, to \s+.
  EXPECT_EQ(split("x   \ny"), (Pieces{"x", "   ", "\n", "y"}));
  EXPECT_EQ(split("x\n\n\ny"), (Pieces{"x", "\n\n", "\n", "y"}));
  EXPECT_EQ(split("x\ny"), (Pieces{"x", "\n", "y"}));
  EXPECT_EQ(split("x\n y"), (Pieces{"x", "\n", " y"}));
  // At the end of the text the whole run is one piece.
  EXPECT_EQ(split("end  "), (Pieces{"end", "  "}));
  EXPECT_EQ(split("end\n\n"), (Pieces{"end", "\n\n"}));
  EXPECT_EQ(split(" "), (Pieces{" "}));
  EXPECT_EQ(split("\t"), (Pieces{"\t"}));
}

TEST(GPT2PreTokenizer, OnlyU0020LeadsAWord) {
  // U+00A0 is \s, but " ?" is a plain space only.
  EXPECT_EQ(split("a \u00a0b"), (Pieces{"a", " ", "\u00a0", "b"}));
  EXPECT_EQ(split("a\u3000b"), (Pieces{"a", "\u3000", "b"}));
  EXPECT_EQ(split("a\tb"), (Pieces{"a", "\t", "b"}));
}

TEST(GPT2PreTokenizer, UnicodeClasses) {
  EXPECT_EQ(split("caf\u00e9 na\u00efve"),
            (Pieces{"caf\u00e9", " na\u00efve"}));
  EXPECT_EQ(split("\u4f60\u597d \u4e16\u754c"),
            (Pieces{"\u4f60\u597d", " \u4e16\u754c"}));
  // ½ (No) and ٣ (Nd) are numbers.
  EXPECT_EQ(split("\u00bd \u0663"), (Pieces{"\u00bd", " \u0663"}));
  // A combining accent (Mn) is neither letter nor number.
  EXPECT_EQ(split("e\u0301t"), (Pieces{"e", "\u0301", "t"}));
  // NEL (U+0085) is not JavaScript white space.
  EXPECT_EQ(split("a\u0085b"), (Pieces{"a", "\u0085", "b"}));
  EXPECT_EQ(split(" \u0085"), (Pieces{" \u0085"}));
  EXPECT_EQ(split("\U0001F600\U0001F600 x"),
            (Pieces{"\U0001F600\U0001F600", " x"}));
}

TEST(GPT2PreTokenizer, PiecesCoverTheText) {
  std::string text = "  It's  1,000\u00a0\u00a0km\u2014a \n\n\tlong way! ";
  std::string joined;
  for (const std::string &p : split(text))
    joined += p;
  EXPECT_EQ(joined, text);
}

TEST(GPT2PreTokenizer, RejectsInvalidUTF8) {
  for (std::string bad :
       {std::string("ab\xff") + "cd", std::string("ab\xc3"),
        std::string("ab\xed\xa0\x80"), std::string("ab\xc0\x80")}) {
    try {
      gpt2PreTokenize(bad);
      FAIL() << "accepted invalid UTF-8";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("invalid UTF-8 at byte offset 2"),
                std::string::npos)
          << e.what();
    }
  }
}
