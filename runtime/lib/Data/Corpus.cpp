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
#include "mixrt/TokenCache.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mixrt;

/// Refuses a part with no text, before it is tokenized.
static void checkNotEmpty(const TextPart &part) {
  if (part.getBytes() == 0)
    fail(part.name, part.ranges.size() > 1 ? ": the corpus files are empty"
                                           : ": the corpus file is empty");
}

/// Refuses \p count tokens of \p name when they hold no whole sequence.
static void checkHoldsASequence(const std::string &name, uint64_t count,
                                const char *tokenizer, int64_t seqLen) {
  if (static_cast<int64_t>(count) < seqLen + 1)
    fail(name, ": the corpus has ", count, " ", tokenizer,
         " tokens, fewer than one sequence needs (seq + 1 = ", seqLen + 1, ")");
}

static void checkSeqLen(const std::string &name, int64_t seqLen) {
  if (seqLen < 1)
    fail(name, ": the sequence length must be at least 1, not ", seqLen);
}

Corpus Corpus::load(const std::string &path, const Tokenizer &tokenizer,
                    int64_t seqLen) {
  InputFile file(path);
  return tokenize({path, {{path, 0, file.getSize()}}}, tokenizer, seqLen);
}

Corpus Corpus::tokenize(const TextPart &part, const Tokenizer &tokenizer,
                        int64_t seqLen) {
  checkSeqLen(part.name, seqLen);
  checkNotEmpty(part);
  std::vector<TokenId> tokens;
  tokenizeText(part, tokenizer, [&](const std::vector<TokenId> &ids) {
    tokens.insert(tokens.end(), ids.begin(), ids.end());
  });
  checkHoldsASequence(part.name, tokens.size(), tokenizer.getName(), seqLen);
  return Corpus(part.name, std::move(tokens));
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

/// DIR/tokens.json parsed, nothing when there is none; an Error names it
/// when it is not JSON.
static std::optional<json::Value> readTokensJson(const std::string &dir) {
  std::string path = dir + "/tokens.json";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return std::nullopt;
  try {
    return json::parse(readFile(path));
  } catch (const json::ParseError &e) {
    fail(path, ": ", e.what());
  }
}

int mixrt::getBinaryTokenWidth(const std::string &dir) {
  std::optional<json::Value> meta = readTokensJson(dir);
  if (!meta)
    return 2;
  const json::Value *dtype = meta->isObject() ? meta->find("dtype") : nullptr;
  std::string name = dtype && dtype->isString() ? dtype->getString() : "";
  if (name == "uint16")
    return 2;
  if (name == "uint32")
    return 4;
  fail(dir, "/tokens.json: expected {\"dtype\": \"uint16\"} or {\"dtype\": "
            "\"uint32\"}, the width of train.bin's and val.bin's tokens");
}

/// Refuses binaries in \p dir whose tokens.json says another tokenizer
/// made them (mix-tokenize bin and the token cache record it; nanoGPT's
/// binaries say nothing and are taken as they are).
static void checkBinaryTokenizer(const std::string &dir,
                                 const Tokenizer &tokenizer) {
  std::optional<json::Value> meta = readTokensJson(dir);
  const json::Value *source =
      meta && meta->isObject() ? meta->find("source") : nullptr;
  const json::Value *made =
      source && source->isObject() ? source->find("tokenizer") : nullptr;
  if (!made || !made->isString() ||
      made->getString() == tokenizer.getIdentity())
    return;
  fail(dir, "/tokens.json: these tokens were made by the tokenizer '",
       made->getString(), "', not by this run's '", tokenizer.getIdentity(),
       "' (--tokenizer, --gpt2-dir)");
}

/// Whether directory \p dir holds pre-tokenized binaries (train.bin).
static bool hasBinaries(const std::string &dir) {
  std::error_code ec;
  return std::filesystem::exists(dir + "/train.bin", ec);
}

/// The cached tokens of \p part, \p file (train.bin or val.bin) of
/// \p bins, which hold \p count tokens of \p tokenizer.
static Corpus mapPart(const TextPart &part, const TokenBinaries &bins,
                      const char *file, uint64_t count,
                      const Tokenizer &tokenizer, int64_t seqLen) {
  checkHoldsASequence(part.name, count, tokenizer.getName(), seqLen);
  return Corpus::map(bins.dir + "/" + file, bins.width, seqLen,
                     tokenizer.getVocabSize());
}

std::pair<Corpus, Corpus> mixrt::loadCorpora(const std::string &data,
                                             const Tokenizer &tokenizer,
                                             int64_t seqLen, int64_t vocabSize,
                                             const std::string &cacheFallback) {
  if (std::filesystem::is_directory(data) && hasBinaries(data)) {
    checkBinaryTokenizer(data, tokenizer);
    int width = getBinaryTokenWidth(data);
    return {Corpus::map(data + "/train.bin", width, seqLen, vocabSize),
            Corpus::map(data + "/val.bin", width, seqLen, vocabSize)};
  }
  TextCorpus text = findTextCorpus(data);
  checkSeqLen(data, seqLen);
  checkNotEmpty(text.train);
  checkNotEmpty(text.val);
  if (auto bins = getTokenCache(data, text, tokenizer, cacheFallback))
    return {mapPart(text.train, *bins, "train.bin", bins->trainTokens,
                    tokenizer, seqLen),
            mapPart(text.val, *bins, "val.bin", bins->valTokens, tokenizer,
                    seqLen)};
  return {Corpus::tokenize(text.train, tokenizer, seqLen),
          Corpus::tokenize(text.val, tokenizer, seqLen)};
}

Corpus mixrt::loadValidationCorpus(const std::string &data,
                                   const Tokenizer &tokenizer, int64_t seqLen,
                                   int64_t vocabSize) {
  if (std::filesystem::is_directory(data) && hasBinaries(data)) {
    checkBinaryTokenizer(data, tokenizer);
    return Corpus::map(data + "/val.bin", getBinaryTokenWidth(data), seqLen,
                       vocabSize);
  }
  TextCorpus text = findTextCorpus(data, /*needTrain=*/false);
  checkSeqLen(data, seqLen);
  checkNotEmpty(text.val);
  if (auto bins = findTokenCache(data, text, tokenizer))
    return mapPart(text.val, *bins, "val.bin", bins->valTokens, tokenizer,
                   seqLen);
  return Corpus::tokenize(text.val, tokenizer, seqLen);
}
