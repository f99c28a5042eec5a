//===- GPT2PreTokenizer.cpp - GPT-2's pre-tokenizer regex by hand ---------===//
//
// Splits UTF-8 text as matchAll with gpt-3-encoder's regex splits it in node,
// by walking code points instead of running a regex engine.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TokenizerGPT2.h"
#include "mixrt/TokenizerUnicode.h"

using namespace mixrt;

namespace {

/// One decoded code point: its class and its length in bytes.
struct CodePoint {
  CodePointClass cls;
  unsigned length;
  char32_t value;
};

CodePoint codePointAt(std::string_view text, size_t pos) {
  CodePoint c;
  c.length = decodeUTF8(text, pos, c.value);
  c.cls = classifyCodePoint(c.value);
  return c;
}

/// The end of the run of code points of class \p cls that starts at \p pos.
size_t endOfRun(std::string_view text, size_t pos, CodePointClass cls) {
  while (pos < text.size()) {
    CodePoint c = codePointAt(text, pos);
    if (c.cls != cls)
      break;
    pos += c.length;
  }
  return pos;
}

/// The length of a contraction ('s 't 're 've 'm 'll 'd) at \p pos, or 0.
size_t contractionLength(std::string_view text, size_t pos) {
  std::string_view rest = text.substr(pos);
  if (rest.size() < 2 || rest[0] != '\'')
    return 0;
  switch (rest[1]) {
  case 's':
  case 't':
  case 'm':
  case 'd':
    return 2;
  case 'r':
  case 'v':
    return rest.size() >= 3 && rest[2] == 'e' ? 3 : 0;
  case 'l':
    return rest.size() >= 3 && rest[2] == 'l' ? 3 : 0;
  default:
    return 0;
  }
}

} // namespace

bool GPT2PreTokenizer::next(std::string_view &piece) {
  if (pos >= text.size())
    return false;
  size_t start = pos;
  size_t end;
  CodePoint first = codePointAt(text, start);

  if (size_t n = contractionLength(text, start)) {
    // 's|'t|'re|'ve|'m|'ll|'d
    end = start + n;
  } else if (first.cls != CodePointClass::Space) {
    // \p{L}+ | \p{N}+ | [^\s\p{L}\p{N}]+
    end = endOfRun(text, start, first.cls);
  } else {
    CodePoint second{CodePointClass::Space, 0, 0};
    if (first.value == ' ' && start + 1 < text.size())
      second = codePointAt(text, start + 1);
    if (second.cls != CodePointClass::Space) {
      // " ?\p{L}+", " ?\p{N}+" or " ?[^\s\p{L}\p{N}]+": a space that leads a
      // run of the next code point's class.
      end = endOfRun(text, start + 1, second.cls);
    } else {
      // \s+(?!\S) | \s+ : the whole white-space run when it ends the text;
      // otherwise all of it but its last code point, which stays to lead the
      // next piece, unless the run is a single code point.
      size_t runEnd = start, last = start;
      while (runEnd < text.size()) {
        CodePoint c = codePointAt(text, runEnd);
        if (c.cls != CodePointClass::Space)
          break;
        last = runEnd;
        runEnd += c.length;
      }
      end = runEnd == text.size() || last == start ? runEnd : last;
    }
  }
  piece = text.substr(start, end - start);
  pos = end;
  return true;
}

std::vector<std::string_view> mixrt::gpt2PreTokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  GPT2PreTokenizer splitter(text);
  std::string_view piece;
  while (splitter.next(piece))
    pieces.push_back(piece);
  return pieces;
}
