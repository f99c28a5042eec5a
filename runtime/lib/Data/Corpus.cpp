//===- Corpus.cpp - A tokenized text file ---------------------------------===//
//
// Reads a text file, tokenizes it, and checks that it holds at least one
// training sequence, with errors that name the file.
//
//===----------------------------------------------------------------------===//

#include "mixrt/Corpus.h"

#include "mixrt/Error.h"
#include "mixrt/File.h"

using namespace mixrt;

Corpus Corpus::load(const std::string &path, const Tokenizer &tokenizer,
                    int64_t seqLen) {
  if (seqLen < 1)
    fail(path, ": the sequence length must be at least 1, not ", seqLen);
  std::string text = readFile(path);
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
