//===- UnicodeTest.cpp - UTF-8 and the pre-tokenizer's classes ------------===//
//
// Strict UTF-8 decoding against hand-made well- and ill-formed sequences, and
// the code point classes against Unicode facts and, when present, node itself.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Error.h"
#include "mixrt/TokenizerUnicode.h"

#include "DataTestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

using namespace mixrt;

namespace {

std::string errorOf(std::string_view text, size_t pos = 0) {
  try {
    char32_t cp;
    decodeUTF8(text, pos, cp);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(UTF8, DecodesEachLength) {
  struct Case {
    const char *bytes;
    char32_t cp;
    unsigned length;
  } cases[] = {
      {"A", U'A', 1},
      {"\x7f", 0x7F, 1},
      {"\xc2\x80", 0x80, 2},
      {"\xc3\xa9", 0xE9, 2}, // é
      {"\xdf\xbf", 0x7FF, 2},
      {"\xe0\xa0\x80", 0x800, 3},
      {"\xe2\x82\xac", 0x20AC, 3}, // €
      {"\xed\x9f\xbf", 0xD7FF, 3}, // Just below the surrogates.
      {"\xee\x80\x80", 0xE000, 3}, // Just above them.
      {"\xef\xbb\xbf", 0xFEFF, 3},
      {"\xef\xbf\xbf", 0xFFFF, 3},
      {"\xf0\x90\x80\x80", 0x10000, 4},
      {"\xf0\x9f\x98\x80", 0x1F600, 4}, // 😀
      {"\xf4\x8f\xbf\xbf", 0x10FFFF, 4},
  };
  for (const Case &c : cases) {
    char32_t cp = 0;
    EXPECT_EQ(decodeUTF8(c.bytes, 0, cp), c.length) << c.bytes;
    EXPECT_EQ(cp, c.cp) << c.bytes;
  }
  std::string nul(1, '\0');
  char32_t cp = 1;
  EXPECT_EQ(decodeUTF8(nul, 0, cp), 1u);
  EXPECT_EQ(cp, 0u);
}

TEST(UTF8, RejectsIllFormedSequences) {
  EXPECT_EQ(errorOf("\x80"), "invalid UTF-8 at byte offset 0 (byte 0x80)");
  EXPECT_EQ(errorOf("ab\xff", 2), "invalid UTF-8 at byte offset 2 (byte 0xFF)");
  const char *bad[] = {
      "\xc0\x80",         // Overlong NUL.
      "\xc1\xbf",         // Overlong 0x7F.
      "\xe0\x9f\xbf",     // Overlong 0x7FF.
      "\xf0\x8f\xbf\xbf", // Overlong 0xFFFF.
      "\xed\xa0\x80",     // U+D800, a surrogate.
      "\xed\xbf\xbf",     // U+DFFF.
      "\xf4\x90\x80\x80", // U+110000.
      "\xf5\x80\x80\x80", // Lead byte past F4.
      "\xc3",             // Truncated.
      "\xe2\x82",         // Truncated.
      "\xf0\x9f\x98",     // Truncated.
      "\xc3\x28",         // Bad continuation.
      "\xe2\x28\xa1",     // Bad continuation.
      "\xfe",
      "\xff",
  };
  for (const char *b : bad)
    EXPECT_NE(errorOf(b).find("invalid UTF-8 at byte offset 0"),
              std::string::npos)
        << "accepted " << b;
}

TEST(UTF8, EncodeDecodeRoundTripsEveryScalarValue) {
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp == 0xD800)
      cp = 0xE000;
    std::string s;
    appendUTF8(s, cp);
    char32_t back;
    ASSERT_EQ(decodeUTF8(s, 0, back), s.size()) << std::hex << cp;
    ASSERT_EQ(back, cp);
  }
}

TEST(CodePointClass, KnownCodePoints) {
  using C = CodePointClass;
  struct Case {
    char32_t cp;
    C cls;
    const char *what;
  } cases[] = {
      {U'a', C::Letter, "Ll"},
      {U'Z', C::Letter, "Lu"},
      {0xAA, C::Letter, "ª, Lo"},
      {0x2B0, C::Letter, "ʰ, Lm"},
      {0x1C5, C::Letter, "ǅ, Lt"},
      {0x4E2D, C::Letter, "中"},
      {0x1D518, C::Letter, "𝔘, mathematical fraktur"},
      {U'7', C::Number, "Nd"},
      {0x660, C::Number, "Arabic-Indic zero"},
      {0xBD, C::Number, "½, No"},
      {0x2162, C::Number, "Ⅲ, Nl"},
      {0x3007, C::Number, "〇, Nl"},
      {U' ', C::Space, "space"},
      {U'\t', C::Space, "tab"},
      {U'\n', C::Space, "line feed"},
      {0x0B, C::Space, "vertical tab"},
      {0x0C, C::Space, "form feed"},
      {U'\r', C::Space, "carriage return"},
      {0xA0, C::Space, "no-break space"},
      {0x2028, C::Space, "line separator"},
      {0x3000, C::Space, "ideographic space"},
      {0xFEFF, C::Space, "BOM: JavaScript's \\s has it"},
      {0x85, C::Other, "NEL: JavaScript's \\s lacks it"},
      {0x200B, C::Other, "zero-width space: not \\s"},
      {0x0, C::Other, "NUL"},
      {U'\'', C::Other, "apostrophe"},
      {U'_', C::Other, "underscore"},
      {0x301, C::Other, "combining acute, Mn"},
      {0x1F600, C::Other, "emoji"},
      {0xE000, C::Other, "private use"},
      {0x10FFFF, C::Other, "noncharacter"},
      // Assigned in Unicode 16.0 and 17.0: older Unicode has them as Other.
      {0x1C89, C::Letter, "Cyrillic capital tje, Unicode 16.0"},
      {0xA7CB, C::Letter, "Latin capital ramshorn, Unicode 16.0"},
      {0x1CCF0, C::Number, "outlined digit zero, Unicode 16.0"},
      {0x088F, C::Letter, "Arabic noon with ring above, Unicode 17.0"},
      {0x0C5C, C::Letter, "Telugu archaic nakaara pollu, Unicode 17.0"},
  };
  for (const Case &c : cases)
    EXPECT_EQ(classifyCodePoint(c.cp), c.cls)
        << "U+" << std::hex << static_cast<unsigned>(c.cp) << " " << c.what;
}

// The tokenizer's classes are those of one Unicode version, compiled in; a
// new table must be a deliberate change of this pin (and of docs/training.md).
TEST(CodePointClass, PinnedToOneUnicodeVersion) {
  EXPECT_EQ(tokenizerUnicodeVersion(), "17.0");
}

// The generator prints the ranges of node's \p{L}, \p{N} and \s; every code
// point must get the same class from the compiled table. A node of another
// Unicode version classes the code points assigned in between differently, so
// the comparison needs the tables' own version.
TEST(CodePointClass, MatchesNodeRegexEngine) {
  std::optional<std::string> nodeUnicode = test::nodeUnicodeVersion();
  if (!nodeUnicode)
    GTEST_SKIP() << "node is not installed; cannot compare with its regexes";
  if (*nodeUnicode != tokenizerUnicodeVersion())
    GTEST_SKIP() << "node's regular expressions know Unicode " << *nodeUnicode
                 << ", the tokenizer's tables Unicode "
                 << tokenizerUnicodeVersion()
                 << "; the comparison needs a node of the tables' version";
  test::ScratchDir dir;
  std::string out = dir.file("ranges.txt");
  std::string cmd = "node '" MIXRT_DATA_LIB_DIR
                    "/gen-unicode-tables.js' --ranges > '" +
                    out + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  std::vector<CodePointClass> expected(0x110000, CodePointClass::Other);
  std::ifstream in(out);
  unsigned long first, last;
  std::string cls;
  size_t ranges = 0;
  while (in >> first >> last >> cls) {
    ++ranges;
    CodePointClass c = cls == "L"   ? CodePointClass::Letter
                       : cls == "N" ? CodePointClass::Number
                                    : CodePointClass::Space;
    for (unsigned long cp = first; cp <= last; ++cp)
      expected[cp] = c;
  }
  ASSERT_GT(ranges, 500u) << "node printed too few ranges";
  size_t wrong = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp)
    if (classifyCodePoint(cp) != expected[cp] && wrong++ < 10)
      ADD_FAILURE() << "U+" << std::hex << static_cast<unsigned>(cp)
                    << " is classed differently from node, whose Unicode "
                       "version is the tables' own";
  EXPECT_EQ(wrong, 0u);
}
