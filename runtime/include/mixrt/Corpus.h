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

  /// Tokenizes \p text, a part of a file that \p name describes in
  /// messages ("FILE (its last tenth)"), with load()'s checks.
  static Corpus fromText(const std::string &name, const std::string &text,
                         const Tokenizer &tokenizer, int64_t seqLen);

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

/// Where a single text file given as the data is cut: its validation part
/// is its last tenth, starting after the first line break at or after 90%
/// of its bytes, or, in a last tenth without one, at 90% moved back to the
/// start of a UTF-8 character. Deterministic: the same file, the same cut.
size_t getValidationCut(const std::string &text);

/// The token width of the binary files in directory \p dir: 4 when
/// DIR/tokens.json says {"dtype": "uint32"}, else 2 (uint16, nanoGPT's;
/// {"dtype": "uint16"} says so explicitly). An Error names the file for
/// anything else.
int getBinaryTokenWidth(const std::string &dir);

/// The training and the validation corpus of `--data DATA`: when DATA is a
/// directory, DATA/train.bin and DATA/val.bin memory-mapped if train.bin
/// is there, else DATA/train.txt and DATA/val.txt tokenized; or one text
/// file cut by getValidationCut. Errors name the path and the part.
std::pair<Corpus, Corpus> loadCorpora(const std::string &data,
                                      const Tokenizer &tokenizer,
                                      int64_t seqLen, int64_t vocabSize);

/// The validation corpus of `--data DATA` alone (eval): DATA/val.bin or
/// DATA/val.txt, or the validation part of one text file.
Corpus loadValidationCorpus(const std::string &data, const Tokenizer &tokenizer,
                            int64_t seqLen, int64_t vocabSize);

} // namespace mixrt

#endif // MIXRT_CORPUS_H
