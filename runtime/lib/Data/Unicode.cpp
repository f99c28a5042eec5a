//===- Unicode.cpp - UTF-8 and code point classes -------------------------===//
//
// Strict UTF-8 decoding (Unicode Table 3-7) and the lookup of a code point's
// pre-tokenizer class in the table generated from node's regex engine.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TokenizerUnicode.h"

#include "mixrt/Error.h"
#include "mixrt/Tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <iterator>

using namespace mixrt;

namespace {

struct CodePointRange {
  char32_t first;
  char32_t last;
  CodePointClass cls;
};

/// Sorted, disjoint ranges; code points in none of them are Other.
const CodePointRange kRanges[] = {
#define MIXRT_CODE_POINT_RANGE(FIRST, LAST, CLASS)                             \
  {FIRST, LAST, CodePointClass::CLASS},
#include "UnicodeTables.inc"
};

/// The Unicode version the ranges were generated from.
constexpr std::string_view kUnicodeVersion =
#define MIXRT_UNICODE_VERSION(VERSION) VERSION
#include "UnicodeTables.inc"
    ;

/// ASCII, the common case, by direct lookup.
struct AsciiTable {
  CodePointClass cls[128];
  AsciiTable() {
    for (char32_t cp = 0; cp < 128; ++cp) {
      cls[cp] = CodePointClass::Other;
      for (const CodePointRange &r : kRanges)
        if (r.first <= cp && cp <= r.last)
          cls[cp] = r.cls;
    }
  }
};

[[noreturn]] void invalidUTF8(std::string_view text, size_t pos) {
  throw InvalidUTF8Error(pos, static_cast<unsigned char>(text[pos]));
}

} // namespace

std::string InvalidUTF8Error::describe(size_t offset, unsigned char byte) {
  char hex[8];
  std::snprintf(hex, sizeof(hex), "0x%02X", byte);
  return concat("invalid UTF-8 at byte offset ", offset, " (byte ", hex, ")");
}

std::string_view mixrt::tokenizerUnicodeVersion() { return kUnicodeVersion; }

CodePointClass mixrt::classifyCodePoint(char32_t cp) {
  static const AsciiTable ascii;
  if (cp < 128)
    return ascii.cls[cp];
  // The first range whose last code point is >= cp.
  const CodePointRange *it = std::lower_bound(
      std::begin(kRanges), std::end(kRanges), cp,
      [](const CodePointRange &r, char32_t c) { return r.last < c; });
  if (it != std::end(kRanges) && it->first <= cp)
    return it->cls;
  return CodePointClass::Other;
}

unsigned mixrt::decodeUTF8(std::string_view text, size_t pos, char32_t &cp) {
  auto byteAt = [&](size_t i) -> unsigned {
    return static_cast<unsigned char>(text[i]);
  };
  unsigned b0 = byteAt(pos);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  unsigned length;
  // The allowed range of the second byte depends on the first (Table 3-7);
  // later bytes are always 0x80..0xBF.
  unsigned lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0)
      lo = 0xA0; // No overlong forms.
    else if (b0 == 0xED)
      hi = 0x9F; // No surrogates.
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0)
      lo = 0x90; // No overlong forms.
    else if (b0 == 0xF4)
      hi = 0x8F; // Nothing above U+10FFFF.
  } else {
    invalidUTF8(text, pos);
  }
  for (unsigned i = 1; i < length; ++i) {
    if (pos + i >= text.size())
      invalidUTF8(text, pos);
    unsigned b = byteAt(pos + i);
    if (b < lo || b > hi)
      invalidUTF8(text, pos);
    lo = 0x80;
    hi = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
  }
  return length;
}

void mixrt::appendUTF8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}
