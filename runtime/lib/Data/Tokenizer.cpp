//===- Tokenizer.cpp - The byte tokenizer and the tokenizer factory -------===//
//
// The byte tokenizer (id = byte value) and createTokenizer(), which picks a
// tokenizer by the name a model spec or a command line gives.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Tokenizer.h"

#include "mixrt/Error.h"
#include "mixrt/TokenizerGPT2.h"

using namespace mixrt;

Tokenizer::~Tokenizer() = default;

std::vector<TokenId> ByteTokenizer::encode(std::string_view text) const {
  std::vector<TokenId> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i)
    ids[i] = static_cast<unsigned char>(text[i]);
  return ids;
}

std::string ByteTokenizer::decode(const TokenId *ids, size_t count) const {
  std::string text(count, '\0');
  for (size_t i = 0; i < count; ++i) {
    if (ids[i] < 0 || ids[i] > 255)
      fail("byte tokenizer: token id ", ids[i], " at position ", i,
           " is outside [0, 256)");
    text[i] = static_cast<char>(ids[i]);
  }
  return text;
}

std::unique_ptr<Tokenizer> mixrt::createTokenizer(std::string_view name,
                                                  const std::string &gpt2Dir) {
  if (name == "byte")
    return std::make_unique<ByteTokenizer>();
  if (name == "gpt2") {
    if (gpt2Dir.empty())
      fail("the gpt2 tokenizer needs the directory that holds encoder.json "
           "and vocab.bpe (data/gpt2 after scripts/fetch-data.sh)");
    return GPT2Tokenizer::load(gpt2Dir);
  }
  fail("unknown tokenizer '", name, "' (expected 'byte' or 'gpt2')");
}
