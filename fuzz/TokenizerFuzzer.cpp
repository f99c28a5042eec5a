//===- TokenizerFuzzer.cpp - Fuzzes the byte and GPT-2 tokenizers ---------===//
//
// Encodes arbitrary bytes with the byte tokenizer and with GPT-2's BPE over a
// small vocabulary (every byte, plus merges of letters, digits, white space,
// punctuation and multi-byte characters, among them gpt-3-encoder's
// "first,second" key collision), and decodes the bytes read as token ids.
// Invariants: decode inverts encode; ids are in [0, V); GPT-2 refuses exactly
// the text that is not valid UTF-8 (checked by an independent validator);
// the pre-tokenizer's pieces are non-empty and cover the text; decoding
// refuses exactly the ids outside [0, V); a text cut where findChunkCut
// allows (TextCorpus.h) splits into the pieces and the ids of the whole.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "mixrt/Error.h"
#include "mixrt/TextCorpus.h"
#include "mixrt/Tokenizer.h"
#include "mixrt/TokenizerGPT2.h"
#include "mixrt/TokenizerUnicode.h"

#include "mixrt/testing/TinyGPT2.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

using namespace mixrt;

/// Whether \p s is well-formed UTF-8 (Unicode's Table 3-7), written out
/// independently of the runtime's decoder.
static bool isValidUTF8(std::string_view s) {
  size_t i = 0;
  auto in = [&](size_t at, unsigned lo, unsigned hi) {
    return at < s.size() && static_cast<unsigned char>(s[at]) >= lo &&
           static_cast<unsigned char>(s[at]) <= hi;
  };
  while (i < s.size()) {
    unsigned b = static_cast<unsigned char>(s[i]);
    if (b <= 0x7F) {
      i += 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
      if (!in(i + 1, 0x80, 0xBF))
        return false;
      i += 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      unsigned lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
      if (!in(i + 1, lo, hi) || !in(i + 2, 0x80, 0xBF))
        return false;
      i += 3;
    } else if (b >= 0xF0 && b <= 0xF4) {
      unsigned lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
      if (!in(i + 1, lo, hi) || !in(i + 2, 0x80, 0xBF) ||
          !in(i + 3, 0x80, 0xBF))
        return false;
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

static bool contains(const char *message, const char *part) {
  return std::strstr(message, part) != nullptr;
}

static const GPT2Tokenizer &tinyGPT2() {
  static const std::unique_ptr<GPT2Tokenizer> tok = [] {
    std::vector<std::pair<std::string, std::string>> merges = {
        {"t", "h"},   {"th", "e"},      {" ", "the"},     {"e", "r"},
        {"i", "n"},   {"in", "g"},      {" ", "a"},       {"1", "2"},
        {"12", "3"},  {" ", " "},       {"  ", "  "},     {"'", "s"},
        {"\"", ","},  {",", "\""},      {"\"", ",\""},    {".", "."},
        {"\n", "\n"}, {"\xC3", "\xA9"}, {"\xE2", "\x80"}, {"\xE2\x80", "\x94"}};
    std::vector<std::string> symbols;
    for (const auto &[first, second] : merges)
      symbols.push_back(first + second);
    mixrt::testing::writeTinyGPT2(mixfuzz::scratchDir(), symbols, merges);
    return GPT2Tokenizer::load(mixfuzz::scratchDir());
  }();
  return *tok;
}

/// Decodes \p ids; checks that it fails exactly when an id is out of range.
static void checkDecode(const Tokenizer &tok, const std::vector<TokenId> &ids) {
  bool inRange = true;
  for (TokenId id : ids)
    inRange &= id >= 0 && id < tok.getVocabSize();
  try {
    std::string text = tok.decode(ids);
    FUZZ_CHECK(inRange);
  } catch (const Error &e) {
    FUZZ_CHECK(!inRange && contains(e.what(), "is outside [0, "));
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::vector<TokenId> asIds(size / sizeof(TokenId));
  if (!asIds.empty())
    std::memcpy(asIds.data(), data, asIds.size() * sizeof(TokenId));

  // The byte tokenizer accepts any bytes.
  ByteTokenizer bytes;
  std::vector<TokenId> byteIds = bytes.encode(text);
  FUZZ_CHECK(byteIds.size() == size);
  FUZZ_CHECK(bytes.decode(byteIds) == text);
  checkDecode(bytes, asIds);

  // GPT-2 BPE: valid UTF-8 round-trips, anything else is refused.
  const GPT2Tokenizer &gpt2 = tinyGPT2();
  checkDecode(gpt2, asIds);
  bool valid = isValidUTF8(text);
  std::vector<TokenId> ids;
  try {
    ids = gpt2.encode(text);
  } catch (const Error &e) {
    FUZZ_CHECK(valid ? contains(e.what(), "not in the vocabulary")
                     : contains(e.what(), "invalid UTF-8 at byte offset"));
    return 0;
  }
  FUZZ_CHECK(valid);
  for (TokenId id : ids)
    FUZZ_CHECK(id >= 0 && id < gpt2.getVocabSize());
  FUZZ_CHECK(gpt2.decode(ids) == text);
  FUZZ_CHECK(ids.size() <= size);

  // The pieces cover the text, and its code points re-encode to it.
  std::string joined;
  for (std::string_view piece : gpt2PreTokenize(text)) {
    FUZZ_CHECK(!piece.empty());
    joined += piece;
  }
  FUZZ_CHECK(joined == text);
  std::string reencoded;
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp;
    pos += decodeUTF8(text, pos, cp);
    appendUTF8(reencoded, cp);
  }
  FUZZ_CHECK(reencoded == text);

  // Chunked tokenization: at the last cut of the text and of its first
  // half, both halves' pieces and ids are the whole's.
  for (std::string_view prefix : {text, text.substr(0, size / 2)}) {
    size_t cut = findChunkCut(prefix);
    if (cut == 0)
      continue;
    FUZZ_CHECK(cut < prefix.size());
    std::string_view head = text.substr(0, cut), tail = text.substr(cut);
    std::vector<std::string_view> whole = gpt2PreTokenize(text);
    std::vector<std::string_view> halves = gpt2PreTokenize(head);
    for (std::string_view piece : gpt2PreTokenize(tail))
      halves.push_back(piece);
    FUZZ_CHECK(halves.size() == whole.size());
    for (size_t i = 0; i < whole.size(); ++i)
      FUZZ_CHECK(halves[i] == whole[i]);
    std::vector<TokenId> chunked = gpt2.encode(head);
    for (TokenId id : gpt2.encode(tail))
      chunked.push_back(id);
    FUZZ_CHECK(chunked == ids);
  }
  return 0;
}
