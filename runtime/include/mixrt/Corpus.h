//===- Corpus.h - A tokenized text file -------------------------*- C++ -*-===//
//
// Reads a text file (e.g. data/brown/train.txt), tokenizes all of it, and
// holds the token ids that training windows are cut from.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_CORPUS_H
#define MIXRT_CORPUS_H

#include "mixrt/Tokenizer.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mixrt {

/// The token ids of one text file.
class Corpus {
public:
  /// Reads and tokenizes \p path. Throws mixrt::Error naming the path when
  /// the file is missing, unreadable or empty, when the tokenizer rejects it
  /// (e.g. invalid UTF-8 for GPT-2), or when it has fewer than \p seqLen + 1
  /// tokens: one training sequence needs seqLen inputs and the target after
  /// the last of them.
  static Corpus load(const std::string &path, const Tokenizer &tokenizer,
                     int64_t seqLen);

  const std::string &getPath() const { return path; }
  const std::vector<TokenId> &getTokens() const { return tokens; }
  size_t size() const { return tokens.size(); }

private:
  Corpus(std::string path, std::vector<TokenId> tokens)
      : path(std::move(path)), tokens(std::move(tokens)) {}

  std::string path;
  std::vector<TokenId> tokens;
};

} // namespace mixrt

#endif // MIXRT_CORPUS_H
