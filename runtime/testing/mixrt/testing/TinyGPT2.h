//===- TinyGPT2.h - A tiny GPT-2 vocabulary for tests ----------*- C++ -*-===//
//
// Writes a GPT-2 vocabulary of all 256 byte symbols plus chosen merges, in
// the files the GPT-2 tokenizer reads: for the runtime's tests and the
// tokenizer's fuzz target alike.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TESTING_TINYGPT2_H
#define MIXRT_TESTING_TINYGPT2_H

#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mixrt::testing {

inline void writeFile(const std::string &path, const std::string &contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

/// GPT-2's bytes_to_unicode(): the UTF-8 of the character that stands for
/// byte \p b in encoder.json and vocab.bpe. Written out independently of
/// the runtime's inverse table, so the tests check that table too.
inline std::string gpt2Char(unsigned char b) {
  unsigned cp = b;
  bool printable =
      (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
  if (!printable) {
    cp = 0x100;
    for (unsigned c = 0; c < b; ++c)
      if (!((c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) ||
            (c >= 0xAE)))
        ++cp;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

/// A symbol's bytes in GPT-2's alphabet.
inline std::string gpt2Symbol(const std::string &bytes) {
  std::string s;
  for (char c : bytes)
    s += gpt2Char(static_cast<unsigned char>(c));
  return s;
}

/// A JSON string literal of \p s (which needs escaping only for " and \).
inline std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// Writes \p dir/encoder.json and \p dir/vocab.bpe: ids 0..255 are the bytes
/// 0..255, then \p extraSymbols get the ids 256, 257, ... in order; the
/// merges (pairs of raw-byte symbols) follow the version line in order.
inline void
writeTinyGPT2(const std::string &dir,
              const std::vector<std::string> &extraSymbols,
              const std::vector<std::pair<std::string, std::string>> &merges) {
  std::string encoder = "{";
  int id = 0;
  for (int b = 0; b < 256; ++b, ++id)
    encoder += (id ? ", " : "") +
               jsonString(gpt2Char(static_cast<unsigned char>(b))) + ": " +
               std::to_string(id);
  for (const std::string &s : extraSymbols)
    encoder += ", " + jsonString(gpt2Symbol(s)) + ": " + std::to_string(id++);
  encoder += "}";
  writeFile(dir + "/encoder.json", encoder);

  std::string bpe = "#version: 0.2\n";
  for (const auto &[first, second] : merges)
    bpe += gpt2Symbol(first) + " " + gpt2Symbol(second) + "\n";
  writeFile(dir + "/vocab.bpe", bpe);
}

} // namespace mixrt::testing

#endif // MIXRT_TESTING_TINYGPT2_H
