//===- TokenizerUnicode.h - UTF-8 and code point classes --------*- C++ -*-===//
//
// Strict UTF-8 decoding and encoding, and the three code point classes of the
// GPT-2 pre-tokenizer regex (\p{L}, \p{N}, \s) as node's regex engine has them.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TOKENIZERUNICODE_H
#define MIXRT_TOKENIZERUNICODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mixrt {

/// The class of a code point in the pre-tokenizer regex. The classes are
/// disjoint; Other is everything else ([^\s\p{L}\p{N}]).
enum class CodePointClass : uint8_t { Other, Letter, Number, Space };

/// \p{L} -> Letter, \p{N} -> Number, JavaScript's \s -> Space, from the
/// generated table UnicodeTables.inc. The classes are those of one Unicode
/// version, tokenizerUnicodeVersion(), compiled in: they do not depend on the
/// node (or anything else) installed where the tokenizer runs.
CodePointClass classifyCodePoint(char32_t cp);

/// The Unicode version of classifyCodePoint's classes ("17.0"): that of the
/// node whose regular expressions generated UnicodeTables.inc.
std::string_view tokenizerUnicodeVersion();

/// Decodes the code point that starts at byte \p pos of \p text into \p cp
/// and returns its length in bytes (1 to 4). Accepts exactly the well-formed
/// sequences of Unicode's Table 3-7: no overlong forms, no surrogates, nothing
/// above U+10FFFF, no truncated sequence. Anything else throws mixrt::Error
/// "invalid UTF-8 at byte offset N (byte 0xXX)".
unsigned decodeUTF8(std::string_view text, size_t pos, char32_t &cp);

/// Appends the UTF-8 encoding of \p cp (a Unicode scalar value) to \p out.
void appendUTF8(std::string &out, char32_t cp);

} // namespace mixrt

#endif // MIXRT_TOKENIZERUNICODE_H
