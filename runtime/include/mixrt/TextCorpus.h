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

/// A problem of the text itself (not UTF-8 for gpt2, a file that shrank
/// while it was read), as opposed to one of where its tokens are written.
class CorpusError : public Error {
public:
  using Error::Error;
};

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
///    with '.' skipped, symbolic links to files followed, to directories
///    not), in the byte order of their paths relative to DATA: those that
///    isValidationFile picks validate, the rest train; when it picks none
///    or all of them, the last one validates. At least two files.
/// Errors name DATA and say what it may be. Files are opened (so that a
/// missing val.txt is named here) but not read. Without \p needTrain (for
/// evaluation), a directory with val.txt and no train.txt is a corpus whose
/// training part is empty.
struct TextCorpus {
  TextPart train, val;
};
TextCorpus findTextCorpus(const std::string &data, bool needTrain = true);

/// Whether a text file of a directory corpus validates: when the FNV-1a
/// 64-bit hash of its path relative to the directory ('/'-separated) is 0
/// modulo 10, about a tenth of the files. A file's part depends on its name
/// alone, so a corpus that gains or loses files moves no other file from
/// training to validation or back.
bool isValidationFile(const std::string &relativePath);

/// Where a single text file given as the data is cut: its validation part
/// is its last tenth, starting after the first line break at or after 90%
/// of its bytes, or, in a last tenth without one, at 90% moved back to the
/// start of a UTF-8 character. Deterministic: the same file, the same cut.
/// Reads the file from 90% up to that line break.
uint64_t getValidationCut(const InputFile &file);

/// The largest cut p < text.size() of this rule, 0 if there is none: \p text
/// may be cut before an ASCII white-space character that follows a code
/// point that is not white space ("a b" -> "a" | " b", "x\r\n" -> "x" |
/// "\r\n"). Both tokenizers split the halves of such a cut as they split
/// the whole: for the byte tokenizer any cut would do; none of GPT-2's
/// pre-tokenizer's pieces has white space after anything else (a leading
/// space is a piece's first character), so the piece before the cut ends
/// there either way, and its regex, having no look-behind, matches from
/// the white space on as it would at the start of a text.
size_t findChunkCut(std::string_view text);

/// Encodes \p part with \p tokenizer a chunk of about \p chunkBytes at a
/// time (cut by findChunkCut; a chunk without a cut, text with no white
/// space after anything else, grows until it has one) and passes each
/// chunk's ids to \p sink, in order. \p progress, if given, is updated
/// with the bytes done. Errors name the file: it cannot be read, or (as
/// CorpusError) invalid UTF-8 for gpt2 with its offset in the file.
void tokenizeText(const TextPart &part, const Tokenizer &tokenizer,
                  const std::function<void(const std::vector<TokenId> &)> &sink,
                  Progress *progress = nullptr,
                  size_t chunkBytes = size_t(8) << 20);

} // namespace mixrt

#endif // MIXRT_TEXTCORPUS_H
