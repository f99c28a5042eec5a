//===- Tokenizer.h - Text to token ids and back -----------------*- C++ -*-===//
//
// The tokenizer interface, the byte tokenizer (V = 256, every byte is its own
// token) and the factory that picks a tokenizer by name.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TOKENIZER_H
#define MIXRT_TOKENIZER_H

#include "mixrt/Error.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mixrt {

/// A token id, in [0, vocabSize()).
using TokenId = int32_t;

/// Text that a tokenizer cannot take because it is not UTF-8 (gpt2): "invalid
/// UTF-8 at byte offset N (byte 0xFF)", N counted from the start of the
/// text given to encode(). A caller that encodes a file a chunk at a time
/// restates it with the offset in the file.
class InvalidUTF8Error : public Error {
public:
  InvalidUTF8Error(size_t offset, unsigned char byte)
      : Error(describe(offset, byte)), offset(offset), byte(byte) {}
  static std::string describe(size_t offset, unsigned char byte);
  size_t getOffset() const { return offset; }
  unsigned char getByte() const { return byte; }

private:
  size_t offset;
  unsigned char byte;
};

/// Maps text to token ids and back. Implementations are immutable after
/// construction, so one tokenizer may serve several threads at once. Errors
/// (an id out of range, text the tokenizer cannot encode) throw mixrt::Error.
class Tokenizer {
public:
  virtual ~Tokenizer();

  /// The name createTokenizer() knows this tokenizer by.
  virtual const char *getName() const = 0;
  /// The number of token ids, V.
  virtual int32_t getVocabSize() const = 0;
  /// What makes this tokenizer's ids for a text what they are: its name,
  /// and for a tokenizer read from files a hash of their contents. Two
  /// tokenizers of equal identity encode every text alike (the token cache
  /// keys on it).
  virtual std::string getIdentity() const { return getName(); }

  virtual std::vector<TokenId> encode(std::string_view text) const = 0;
  /// The bytes the ids stand for (not necessarily valid UTF-8 when the ids
  /// cut a multi-byte character apart).
  virtual std::string decode(const TokenId *ids, size_t count) const = 0;
  std::string decode(const std::vector<TokenId> &ids) const {
    return decode(ids.data(), ids.size());
  }
};

/// Every byte is a token: encode maps byte b to id b, decode is its inverse.
/// Any bytes are accepted, valid UTF-8 or not.
class ByteTokenizer final : public Tokenizer {
public:
  using Tokenizer::decode;

  const char *getName() const override { return "byte"; }
  int32_t getVocabSize() const override { return 256; }
  std::vector<TokenId> encode(std::string_view text) const override;
  std::string decode(const TokenId *ids, size_t count) const override;
};

/// The tokenizer named \p name: "byte", or "gpt2" with the directory that
/// holds encoder.json and vocab.bpe (data/gpt2 after scripts/fetch-data.sh).
std::unique_ptr<Tokenizer> createTokenizer(std::string_view name,
                                           const std::string &gpt2Dir = "");

} // namespace mixrt

#endif // MIXRT_TOKENIZER_H
