//===- TextCorpus.cpp - Text corpora: their split and their tokens --------===//
//
// Finds the files of a text corpus and splits them into training and
// validation; tokenizes a part a chunk at a time, cutting only where the
// tokenizers split the halves as they split the whole.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TextCorpus.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Progress.h"
#include "mixrt/TokenizerUnicode.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

using namespace mixrt;
namespace fs = std::filesystem;

uint64_t TextPart::getBytes() const {
  uint64_t bytes = 0;
  for (const TextRange &r : ranges)
    bytes += r.end - r.begin;
  return bytes;
}

uint64_t mixrt::getValidationCut(const InputFile &file) {
  uint64_t size = file.getSize();
  uint64_t cut = size - size / 10;
  // The first line break at or after the cut, read a block at a time.
  std::string block(64 << 10, '\0');
  for (uint64_t at = cut; at < size; at += block.size()) {
    size_t length = size_t(std::min<uint64_t>(block.size(), size - at));
    file.readAt(at, block.data(), length);
    const void *newline = std::memchr(block.data(), '\n', length);
    if (!newline)
      continue;
    uint64_t after =
        at + uint64_t(static_cast<const char *>(newline) - block.data()) + 1;
    if (after < size)
      return after;
    break;
  }
  // No line break left: not inside a UTF-8 character.
  while (cut > 0 && cut < size) {
    unsigned char byte;
    file.readAt(cut, &byte, 1);
    if ((byte & 0xC0) != 0x80)
      break;
    --cut;
  }
  return cut;
}

/// JavaScript's \s among ASCII characters (GPT-2's pre-tokenizer's).
static bool isASCIISpace(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/// Whether the code point that ends at \p end (exclusive) in \p text is
/// a complete, valid UTF-8 sequence and not white space.
static bool endsWithNonSpace(std::string_view text, size_t end) {
  unsigned char last = static_cast<unsigned char>(text[end - 1]);
  if (last < 0x80)
    return !isASCIISpace(last);
  // Back to the lead byte of a sequence of at most four.
  size_t start = end - 1;
  while (start > 0 && end - start < 4 &&
         (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80)
    --start;
  try {
    char32_t cp;
    if (start + decodeUTF8(text, start, cp) != end)
      return false;
    return classifyCodePoint(cp) != CodePointClass::Space;
  } catch (const Error &) {
    return false; // not UTF-8: no cut here (gpt2 reports it)
  }
}

size_t mixrt::findChunkCut(std::string_view text) {
  for (size_t at = text.size(); at > 1;) {
    --at;
    if (isASCIISpace(static_cast<unsigned char>(text[at])) &&
        endsWithNonSpace(text, at))
      return at;
  }
  return 0;
}

/// Encodes \p text, bytes [base, base + size) of \p path, restating an
/// invalid UTF-8 error with its offset in the file.
static std::vector<TokenId> encodeChunk(const Tokenizer &tokenizer,
                                        std::string_view text,
                                        const std::string &path,
                                        uint64_t base) {
  try {
    return tokenizer.encode(text);
  } catch (const InvalidUTF8Error &e) {
    fail(path, ": ",
         InvalidUTF8Error::describe(base + e.getOffset(), e.getByte()));
  } catch (const Error &e) {
    fail(path, ": ", e.what());
  }
}

void mixrt::tokenizeText(
    const TextPart &part, const Tokenizer &tokenizer,
    const std::function<void(const std::vector<TokenId> &)> &sink,
    Progress *progress, size_t chunkBytes) {
  chunkBytes = std::max<size_t>(chunkBytes, 1);
  for (const TextRange &range : part.ranges) {
    InputFile file(range.path);
    if (file.getSize() < range.end)
      throw CorpusError(
          concat(range.path, ": the file shrank while it was read (",
                 file.getSize(), " bytes, ", range.end, " expected)"));
    // text holds bytes [base, next) of the file; a chunk is encoded when
    // text has a cut, or at the end of the range.
    std::string text;
    uint64_t base = range.begin, next = range.begin;
    while (base < range.end) {
      size_t want = chunkBytes;
      size_t cut = 0;
      for (;;) {
        size_t length = size_t(std::min<uint64_t>(want, range.end - next));
        size_t old = text.size();
        text.resize(old + length);
        file.readAt(next, text.data() + old, length);
        next += length;
        if (next == range.end) {
          cut = text.size();
          break;
        }
        if ((cut = findChunkCut(text)) != 0)
          break;
        want = text.size(); // no cut yet: read as much again
      }
      sink(encodeChunk(tokenizer, std::string_view(text.data(), cut),
                       range.path, base));
      if (progress)
        progress->advance(cut);
      base += cut;
      text.erase(0, cut);
    }
  }
}

/// The `*.txt` files under \p dir (names starting with '.' skipped), by
/// their paths relative to \p dir in byte order.
static std::vector<std::string> findTextFiles(const std::string &dir) {
  std::vector<std::string> relative;
  std::error_code ec;
  fs::recursive_directory_iterator it(
      dir, fs::directory_options::skip_permission_denied, ec);
  // An error of increment() also ends the iteration: checked before the
  // end is, so that no error passes for the end of the listing.
  for (;; it.increment(ec)) {
    if (ec)
      fail(dir, ": cannot list the directory: ", ec.message());
    if (it == fs::recursive_directory_iterator())
      break;
    std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec))
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && it->path().extension() == ".txt")
      relative.push_back(it->path().lexically_relative(dir).string());
  }
  std::sort(relative.begin(), relative.end());
  return relative;
}

bool mixrt::isValidationFile(const std::string &relativePath) {
  return fnv1a64(relativePath) % 10 == 0;
}

/// A part of whole files.
static TextRange wholeFile(const std::string &path) {
  InputFile file(path);
  return {path, 0, file.getSize()};
}

TextCorpus mixrt::findTextCorpus(const std::string &data, bool needTrain) {
  std::error_code ec;
  if (!fs::exists(data, ec))
    fail(data, ": no such file or directory (the data is a directory "
               "holding train.txt and val.txt, train.bin and val.bin, or "
               "*.txt files; or one text file)");
  TextCorpus corpus;
  if (!fs::is_directory(data, ec)) {
    InputFile file(data);
    uint64_t cut = getValidationCut(file);
    corpus.train = {data + " (its first nine tenths, for training)",
                    {{data, 0, cut}}};
    corpus.val = {data + " (its last tenth, for validation)",
                  {{data, cut, file.getSize()}}};
    return corpus;
  }
  bool hasTrain = fs::exists(data + "/train.txt", ec);
  if (hasTrain || fs::exists(data + "/val.txt", ec)) {
    corpus.train.name = data + "/train.txt";
    if (hasTrain || needTrain)
      corpus.train.ranges = {wholeFile(data + "/train.txt")};
    corpus.val = {data + "/val.txt", {wholeFile(data + "/val.txt")}};
    return corpus;
  }
  std::vector<std::string> files = findTextFiles(data);
  if (files.size() < 2)
    fail(data,
         ": a directory of text files needs at least two *.txt files "
         "(one to validate on), found ",
         files.size(),
         " (the data may also be a directory holding train.txt and "
         "val.txt, or train.bin and val.bin, or one text file)");
  // By a hash of the name, so that adding or removing a file moves no
  // other file between the parts.
  std::vector<bool> validates(files.size());
  size_t valCount = 0;
  for (size_t i = 0; i < files.size(); ++i)
    valCount += validates[i] = isValidationFile(files[i]);
  if (valCount == 0 || valCount == files.size()) {
    std::fill(validates.begin(), validates.end(), false);
    validates.back() = true;
    valCount = 1;
  }
  for (size_t i = 0; i < files.size(); ++i)
    (validates[i] ? corpus.val : corpus.train)
        .ranges.push_back(wholeFile(data + "/" + files[i]));
  corpus.train.name =
      concat(data, " (its ", files.size() - valCount, " training files)");
  corpus.val.name = concat(data, " (its ", valCount, " validation file",
                           valCount == 1 ? "" : "s", ")");
  return corpus;
}
