//===- TextCorpus.h - Text corpora: their split and their tokens -*- C++
//-*-===//
//
// The text behind `--data`: which files (or which bytes of one file) train
// and which validate, and their tokenization a chunk at a time, so that a
// corpus larger than memory can be tokenized (into the binaries of
// TokenCache.h) without being read whole.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TEXTCORPUS_H
#define MIXRT_TEXTCORPUS_H

#include "mixrt/Tokenizer.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mixrt {

class InputFile;
class Progress;

/// Bytes [begin, end) of a text file.
struct TextRange {
  std::string path;
  uint64_t begin = 0, end = 0;
};

/// The training or the validation part of a text corpus: byte ranges of
/// files, each tokenized on its own, their tokens concatenated in order.
struct TextPart {
  /// The part in messages: "DIR/train.txt", "FILE (its last tenth, for
  /// validation)", "DIR (its 3 validation files)".
  std::string name;
  std::vector<TextRange> ranges;

  uint64_t getBytes() const;
};

/// The two parts of the text corpus `--data DATA` names:
///  - DATA/train.txt and DATA/val.txt, when DATA is a directory holding
///    either;
///  - one text file DATA, cut by getValidationCut;
///  - the `*.txt` files under directory DATA, at any depth (names starting
///    with '.' skipped), in the byte order of their paths relative to DATA:
///    every tenth (the 10th, 20th, ...) validates, the rest train; with
///    fewer than ten files, the last one validates. At least two files.
/// Errors name DATA and say what it may be. Files are opened (so that a
/// missing val.txt is named here) but not read. Without \p needTrain (for
/// evaluation), a directory with val.txt and no train.txt is a corpus whose
/// training part is empty.
struct TextCorpus {
  TextPart train, val;
};
TextCorpus findTextCorpus(const std::string &data, bool needTrain = true);

/// getValidationCut (Corpus.h) of a file, reading only the bytes around
/// 90% of it.
uint64_t getValidationCut(const InputFile &file);

/// The largest p <= text.size() at which \p text may be cut so that GPT-2's
/// pre-tokenizer (and the byte tokenizer) split both halves as they split
/// the whole: just after a line break that has a printable ASCII character
/// other than a space on either side ("a\nb" -> "a\n" | "b"). 0 if there
/// is none. The line break stays a piece of its own either way; nothing
/// else can reach across it.
size_t findChunkCut(std::string_view text);

/// Encodes \p part with \p tokenizer a chunk of about \p chunkBytes at a
/// time (cut by findChunkCut; a chunk grows until it finds a cut) and
/// passes each chunk's ids to \p sink, in order. \p progress, if given, is
/// updated with the bytes done. Errors name the file: it cannot be read,
/// or invalid UTF-8 (with its offset in the file) for gpt2.
void tokenizeText(const TextPart &part, const Tokenizer &tokenizer,
                  const std::function<void(const std::vector<TokenId> &)> &sink,
                  Progress *progress = nullptr,
                  size_t chunkBytes = size_t(8) << 20);

} // namespace mixrt

#endif // MIXRT_TEXTCORPUS_H
