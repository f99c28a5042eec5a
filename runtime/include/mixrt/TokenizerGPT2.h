//===- TokenizerGPT2.h - The GPT-2 byte-level BPE tokenizer -----*- C++ -*-===//
//
// GPT-2's tokenizer, id for id the same as the `encode` of the npm package
// gpt-3-encoder 1.1.4: its pre-tokenizer regex, byte alphabet and BPE merges.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TOKENIZERGPT2_H
#define MIXRT_TOKENIZERGPT2_H

#include "mixrt/Tokenizer.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mixrt {

/// Splits text into the pieces of GPT-2's pre-tokenizer regex
///   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
/// with JavaScript's semantics (u flag): \s is JavaScript's white space, \p{L}
/// and \p{N} are the Unicode classes of node's engine (TokenizerUnicode.h).
/// The pieces are views into the text and cover all of it, in order.
///
/// The text must be valid UTF-8; invalid UTF-8 throws mixrt::Error naming the
/// byte offset. (JavaScript strings cannot hold invalid UTF-8: node replaces
/// each bad sequence with U+FFFD when it reads a file, which silently changes
/// the text. Rejecting it instead keeps the ids an exact function of the
/// bytes and points at the bad byte.)
class GPT2PreTokenizer {
public:
  explicit GPT2PreTokenizer(std::string_view text) : text(text) {}
  /// Sets \p piece to the next piece; false once the text is used up.
  bool next(std::string_view &piece);

private:
  std::string_view text;
  size_t pos = 0;
};

/// All pieces of \p text (see GPT2PreTokenizer).
std::vector<std::string_view> gpt2PreTokenize(std::string_view text);

/// GPT-2 byte-level BPE. encode() pre-tokenizes the text, turns each piece
/// into its bytes and merges adjacent symbols by rank, the lowest-ranked
/// merge first, like gpt-3-encoder's `encode` (including its one quirk: it
/// looks merges up by the string "first,second", so a pair such as
/// ("\",", "\"") takes the rank of the merge ("\"", ",\"")). decode() maps
/// ids back to bytes; <|endoftext|> (50256) decodes to its literal text and is
/// never produced by encode(), as in the JavaScript package.
class GPT2Tokenizer final : public Tokenizer {
public:
  using Tokenizer::decode;

  /// Reads \p dir/encoder.json and \p dir/vocab.bpe; throws mixrt::Error
  /// naming the file and line of any problem.
  static std::unique_ptr<GPT2Tokenizer> load(const std::string &dir);

  const char *getName() const override { return "gpt2"; }
  int32_t getVocabSize() const override {
    return static_cast<int32_t>(idToBytes.size());
  }
  /// "gpt2 HASH unicode VERSION": the FNV-1a 64 hash of encoder.json and
  /// vocab.bpe, and the Unicode version of the pre-tokenizer's classes.
  std::string getIdentity() const override { return identity; }
  std::vector<TokenId> encode(std::string_view text) const override;
  std::string decode(const TokenId *ids, size_t count) const override;

  /// The ids of one pre-tokenized piece (its bytes merged by rank).
  void encodePiece(std::string_view piece, std::vector<TokenId> &out) const;

private:
  GPT2Tokenizer() = default;

  std::string identity;
  /// Token id -> the bytes it stands for.
  std::vector<std::string> idToBytes;
  /// The bytes of a vocabulary symbol -> its id.
  std::unordered_map<std::string, TokenId> bytesToId;
  /// "first,second" (the bytes of both symbols joined by a comma) -> the
  /// merge's rank, its 0-based line in vocab.bpe after the version line.
  std::unordered_map<std::string, int32_t> mergeRanks;
};

} // namespace mixrt

#endif // MIXRT_TOKENIZERGPT2_H
