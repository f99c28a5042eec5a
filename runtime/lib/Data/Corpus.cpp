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

#include <filesystem>

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

std::pair<Corpus, Corpus> mixrt::loadCorpora(const std::string &data,
                                             const Tokenizer &tokenizer,
                                             int64_t seqLen) {
  checkDataPath(data);
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
                                   const Tokenizer &tokenizer, int64_t seqLen) {
  checkDataPath(data);
  if (std::filesystem::is_directory(data))
    return Corpus::load(data + "/val.txt", tokenizer, seqLen);
  std::string text = readFile(data);
  return Corpus::fromText(data + " (its last tenth, for validation)",
                          text.substr(getValidationCut(text)), tokenizer,
                          seqLen);
}
