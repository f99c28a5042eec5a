//===- Corpus.h - A tokenized text file -------------------------*- C++ -*-===//
//
// Reads a text file (e.g. data/brown/train.txt), tokenizes all of it, and
// holds the token ids that training windows are cut from; and the corpora
// `--data` names: a directory with train.txt and val.txt, or one text file
// split into the two.
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

  /// Tokenizes \p text, a part of a file that \p name describes in
  /// messages ("FILE (its last tenth)"), with load()'s checks.
  static Corpus fromText(const std::string &name, const std::string &text,
                         const Tokenizer &tokenizer, int64_t seqLen);

  const std::string &getPath() const { return path; }
  const std::vector<TokenId> &getTokens() const { return tokens; }
  size_t size() const { return tokens.size(); }

private:
  Corpus(std::string path, std::vector<TokenId> tokens)
      : path(std::move(path)), tokens(std::move(tokens)) {}

  std::string path;
  std::vector<TokenId> tokens;
};

/// Where a single text file given as the data is cut: its validation part
/// is its last tenth, starting after the first line break at or after 90%
/// of its bytes, or, in a last tenth without one, at 90% moved back to the
/// start of a UTF-8 character. Deterministic: the same file, the same cut.
size_t getValidationCut(const std::string &text);

/// The training and the validation corpus of `--data DATA`: DATA/train.txt
/// and DATA/val.txt when DATA is a directory, or one text file cut by
/// getValidationCut. Errors name the path and the part.
std::pair<Corpus, Corpus> loadCorpora(const std::string &data,
                                      const Tokenizer &tokenizer,
                                      int64_t seqLen);

/// The validation corpus of `--data DATA` alone (eval): DATA/val.txt, or
/// the validation part of one text file.
Corpus loadValidationCorpus(const std::string &data, const Tokenizer &tokenizer,
                            int64_t seqLen);

} // namespace mixrt

#endif // MIXRT_CORPUS_H
