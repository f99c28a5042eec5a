//===- Corpus.cpp - A tokenized text file ---------------------------------===//
//
// Reads a text file, tokenizes it, and checks that it holds at least one
// training sequence, with errors that name the file; splits one text file
// into a training and a validation part.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Corpus.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"

#include "mixrt/Json.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mixrt;

Corpus Corpus::load(const std::string &path, const Tokenizer &tokenizer,
                    int64_t seqLen) {
  return fromText(path, readFile(path), tokenizer, seqLen);
}

Corpus Corpus::fromText(const std::string &path, const std::string &text,
                        const Tokenizer &tokenizer, int64_t seqLen) {
  if (seqLen < 1)
    fail(path, ": the sequence length must be at least 1, not ", seqLen);
  if (text.empty())
    fail(path, ": the corpus file is empty");
  std::vector<TokenId> tokens;
  try {
    tokens = tokenizer.encode(text);
  } catch (const Error &e) {
    fail(path, ": ", e.what());
  }
  if (static_cast<int64_t>(tokens.size()) < seqLen + 1)
    fail(path, ": the corpus has ", tokens.size(), " ", tokenizer.getName(),
         " tokens, fewer than one sequence needs (seq + 1 = ", seqLen + 1, ")");
  return Corpus(path, std::move(tokens));
}

Corpus::Mapping::~Mapping() {
  if (data)
    ::munmap(const_cast<void *>(data), bytes);
}

Corpus Corpus::map(const std::string &path, int width, int64_t seqLen,
                   int64_t vocabSize) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path, ": cannot open: ", std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, ": not a regular file");
  }
  size_t bytes = size_t(st.st_size);
  if (bytes % size_t(width) != 0) {
    ::close(fd);
    fail(path, ": ", bytes, " bytes is not a whole number of ", width,
         "-byte tokens (uint", 8 * width, ")");
  }
  size_t count = bytes / size_t(width);
  if (int64_t(count) < seqLen + 1) {
    ::close(fd);
    fail(path, ": the corpus has ", count,
         " tokens, fewer than one sequence needs (seq + 1 = ", seqLen + 1, ")");
  }
  // Shared and read-only: ranks on one machine read the same pages.
  void *data = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (data == MAP_FAILED)
    fail(path, ": cannot map: ", std::strerror(errno));
  auto mapping = std::make_shared<Mapping>();
  mapping->data = data;
  mapping->bytes = bytes;
  mapping->width = width;
  mapping->vocabSize = vocabSize;
  Corpus corpus(path, {});
  corpus.mapping = std::move(mapping);
  corpus.count = count;
  return corpus;
}

TokenId Corpus::checkToken(size_t i) const {
  if (!mapping)
    return tokens[i];
  uint32_t id;
  if (mapping->width == 2) {
    uint16_t v;
    std::memcpy(&v, static_cast<const char *>(mapping->data) + 2 * i, 2);
    id = v;
  } else {
    std::memcpy(&id, static_cast<const char *>(mapping->data) + 4 * i, 4);
  }
  if (int64_t(id) >= mapping->vocabSize)
    fail(path, ": token ", i, " is ", id,
         ", outside the model's vocabulary [0, ", mapping->vocabSize, ")");
  return TokenId(id);
}

size_t mixrt::getValidationCut(const std::string &text) {
  size_t cut = text.size() - text.size() / 10;
  size_t newline = text.find('\n', cut);
  if (newline != std::string::npos && newline + 1 < text.size())
    return newline + 1;
  // No line break left: not inside a UTF-8 character.
  while (cut > 0 && cut < text.size() &&
         (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  return cut;
}

/// Refuses a --data path that is not there, saying what it may be.
static void checkDataPath(const std::string &data) {
  std::error_code ec;
  if (!std::filesystem::exists(data, ec))
    fail(data, ": no such file or directory (the data is a directory "
               "holding train.txt and val.txt, or one text file)");
}

int mixrt::getBinaryTokenWidth(const std::string &dir) {
  std::string path = dir + "/tokens.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return 2;
  json::Value meta;
  try {
    meta = json::parse(readFile(path));
  } catch (const json::ParseError &e) {
    fail(path, ": ", e.what());
  }
  const json::Value *dtype = meta.isObject() ? meta.find("dtype") : nullptr;
  std::string name = dtype && dtype->isString() ? dtype->getString() : "";
  if (name == "uint16")
    return 2;
  if (name == "uint32")
    return 4;
  fail(path, ": expected {\"dtype\": \"uint16\"} or {\"dtype\": "
             "\"uint32\"}, the width of train.bin's and val.bin's tokens");
}

/// Whether directory \p dir holds pre-tokenized binaries (train.bin).
static bool hasBinaries(const std::string &dir) {
  std::error_code ec;
  return std::filesystem::exists(dir + "/train.bin", ec);
}

std::pair<Corpus, Corpus> mixrt::loadCorpora(const std::string &data,
                                             const Tokenizer &tokenizer,
                                             int64_t seqLen,
                                             int64_t vocabSize) {
  checkDataPath(data);
  if (std::filesystem::is_directory(data) && hasBinaries(data)) {
    int width = getBinaryTokenWidth(data);
    return {Corpus::map(data + "/train.bin", width, seqLen, vocabSize),
            Corpus::map(data + "/val.bin", width, seqLen, vocabSize)};
  }
  if (std::filesystem::is_directory(data))
    return {Corpus::load(data + "/train.txt", tokenizer, seqLen),
            Corpus::load(data + "/val.txt", tokenizer, seqLen)};
  std::string text = readFile(data);
  size_t cut = getValidationCut(text);
  return {Corpus::fromText(data + " (its first nine tenths, for training)",
                           text.substr(0, cut), tokenizer, seqLen),
          Corpus::fromText(data + " (its last tenth, for validation)",
                           text.substr(cut), tokenizer, seqLen)};
}

Corpus mixrt::loadValidationCorpus(const std::string &data,
                                   const Tokenizer &tokenizer, int64_t seqLen,
                                   int64_t vocabSize) {
  checkDataPath(data);
  if (std::filesystem::is_directory(data) && hasBinaries(data))
    return Corpus::map(data + "/val.bin", getBinaryTokenWidth(data), seqLen,
                       vocabSize);
  if (std::filesystem::is_directory(data))
    return Corpus::load(data + "/val.txt", tokenizer, seqLen);
  std::string text = readFile(data);
  return Corpus::fromText(data + " (its last tenth, for validation)",
                          text.substr(getValidationCut(text)), tokenizer,
                          seqLen);
}
