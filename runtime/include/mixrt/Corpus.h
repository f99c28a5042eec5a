//===- Corpus.h - A tokenized text file -------------------------*- C++ -*-===//
//
// The token ids that training windows are cut from: a text tokenized in
// memory, or token binaries memory-mapped; and the training and validation
// corpora that `--data` names.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_CORPUS_H
#define MIXRT_CORPUS_H

#include "mixrt/TextCorpus.h"
#include "mixrt/Tokenizer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mixrt {

/// The token ids of a corpus: a text file tokenized, or a pre-tokenized
/// binary file (nanoGPT's layout) memory-mapped.
class Corpus {
public:
  /// Reads and tokenizes \p path. Throws mixrt::Error naming the path when
  /// the file is missing, unreadable or empty, when the tokenizer rejects it
  /// (e.g. invalid UTF-8 for GPT-2), or when it has fewer than \p seqLen + 1
  /// tokens: one training sequence needs seqLen inputs and the target after
  /// the last of them.
  static Corpus load(const std::string &path, const Tokenizer &tokenizer,
                     int64_t seqLen);

  /// Tokenizes \p part in memory (a chunk at a time, tokenizeText), with
  /// load()'s checks; messages name the part (TextPart::name).
  static Corpus tokenize(const TextPart &part, const Tokenizer &tokenizer,
                         int64_t seqLen);

  /// Maps \p path, a pre-tokenized binary file: \p width (2 or 4) bytes
  /// a token, little-endian unsigned, no header (nanoGPT's train.bin and
  /// val.bin are width 2). The file is memory-mapped read-only and shared
  /// (ranks on one machine share its pages), never read whole. An Error
  /// names the path for a size that is not a whole number of tokens or
  /// fewer than \p seqLen + 1 tokens. Token ids are checked against
  /// \p vocabSize as batches read them (checkToken).
  static Corpus map(const std::string &path, int width, int64_t seqLen,
                    int64_t vocabSize);

  const std::string &getPath() const { return path; }
  size_t size() const { return count; }
  /// Token \p i, which must lie in [0, vocabSize) for a mapped file (a
  /// text corpus's tokenizer guarantees it); an Error names the file, the
  /// position and the id otherwise.
  TokenId checkToken(size_t i) const;

private:
  struct Mapping {
    const void *data = nullptr;
    size_t bytes = 0;
    int width = 2;
    int64_t vocabSize = 0;
    ~Mapping();
  };
  Corpus(std::string path, std::vector<TokenId> tokens)
      : path(std::move(path)), tokens(std::move(tokens)),
        count(this->tokens.size()) {}

  std::string path;
  std::vector<TokenId> tokens;
  std::shared_ptr<const Mapping> mapping;
  size_t count = 0;
};

/// The token width of the binary files in directory \p dir: 4 when
/// DIR/tokens.json says {"dtype": "uint32"}, else 2 (uint16, nanoGPT's;
/// {"dtype": "uint16"} says so explicitly). An Error names the file for
/// anything else.
int getBinaryTokenWidth(const std::string &dir);

/// The training and the validation corpus of `--data DATA`: when DATA is a
/// directory holding train.bin, DATA/train.bin and DATA/val.bin
/// memory-mapped; otherwise the text corpus findTextCorpus (TextCorpus.h)
/// finds, from its token cache (getTokenCache, made in DATA's or, failing
/// that, in \p cacheFallbackDir) or tokenized in memory. Errors name the
/// path and the part.
std::pair<Corpus, Corpus> loadCorpora(const std::string &data,
                                      const Tokenizer &tokenizer,
                                      int64_t seqLen, int64_t vocabSize,
                                      const std::string &cacheFallbackDir = "");

/// The validation corpus of `--data DATA` alone (eval): DATA/val.bin, or
/// the validation part of DATA's text from a current token cache, or
/// tokenized in memory (eval makes no cache: training does).
Corpus loadValidationCorpus(const std::string &data, const Tokenizer &tokenizer,
                            int64_t seqLen, int64_t vocabSize);

} // namespace mixrt

#endif // MIXRT_CORPUS_H
