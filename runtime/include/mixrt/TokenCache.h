//===- TokenCache.h - Text tokenized once into binaries ---------*- C++ -*-===//
//
// A text corpus tokenized into nanoGPT-style binaries (train.bin, val.bin,
// and tokens.json stating their width and what they were made from), which
// training then memory-maps; kept next to the data and reused for as long
// as the text files and the tokenizer are unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TOKENCACHE_H
#define MIXRT_TOKENCACHE_H

#include "mixrt/TextCorpus.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mixrt {

/// Binaries of a text corpus in a directory.
struct TokenBinaries {
  std::string dir;
  /// Bytes a token: 2 (uint16) or 4 (uint32).
  int width = 2;
  uint64_t trainTokens = 0, valTokens = 0;
};

/// Tokenizes \p corpus, the text of `--data DATA`, into \p dir (created if
/// missing): train.bin and
/// val.bin, little-endian tokens of 2 bytes (uint16) when the vocabulary
/// has at most 65536 ids and 4 otherwise, and tokens.json, which states the
/// width ({"dtype": "uint16"}, as getBinaryTokenWidth reads it) and what the
/// tokens were made from: the tokenizer's identity and every source file's
/// path (relative to DATA, or for a file DATA to its directory), byte range,
/// size and modification time. Each file is replaced atomically, tokens.json
/// last. \p showProgress draws a progress bar on stderr (Progress).
TokenBinaries writeTokenBinaries(const std::string &data,
                                 const TextCorpus &corpus,
                                 const Tokenizer &tokenizer,
                                 const std::string &dir, bool showProgress);

/// The binaries in \p dir when its tokens.json says they were made from
/// \p corpus, the text of `--data DATA`, as its files are now (paths,
/// sizes and modification times) by a tokenizer of \p tokenizer's
/// identity, and their sizes agree; nothing otherwise.
std::optional<TokenBinaries> findTokenBinaries(const std::string &dir,
                                               const std::string &data,
                                               const TextCorpus &corpus,
                                               const Tokenizer &tokenizer);

/// The directory that `--data DATA`'s tokens are cached in, for a
/// tokenizer named NAME: DATA/.mix-tokens/NAME for a directory,
/// PARENT/.FILE.mix-tokens/NAME for a file PARENT/FILE; NAME-HASH for a
/// tokenizer read from files (HASH: of its identity), so that caches of
/// two GPT-2 vocabularies stand side by side.
std::string getTokenCacheDir(const std::string &data,
                             const Tokenizer &tokenizer);

/// Text corpora smaller than this many bytes are tokenized in memory on
/// every run, without a cache (it would save nothing measurable).
constexpr uint64_t kTokenCacheMinBytes = uint64_t(1) << 20;

/// The current cached binaries of `--data DATA` in getTokenCacheDir(DATA),
/// made by nobody now; nothing when there are none or MIXRT_TOKEN_CACHE=0.
std::optional<TokenBinaries> findTokenCache(const std::string &data,
                                            const TextCorpus &corpus,
                                            const Tokenizer &tokenizer);

/// Text corpora from this many bytes up get a progress bar as they are
/// tokenized.
constexpr uint64_t kTokenProgressMinBytes = uint64_t(16) << 20;

/// The cached binaries of `--data DATA` (the text corpus \p corpus), made
/// now if they are missing or stale, under a lock that other processes
/// (ranks) wait on; in getTokenCacheDir(DATA), or, where that cannot be
/// written, in \p fallbackDir (when given). Nothing when the text is
/// smaller than kTokenCacheMinBytes or no cache can be written (with a note
/// on stderr): the caller then tokenizes in memory. MIXRT_TOKEN_CACHE=1
/// caches a corpus of any size, 0 none.
std::optional<TokenBinaries> getTokenCache(const std::string &data,
                                           const TextCorpus &corpus,
                                           const Tokenizer &tokenizer,
                                           const std::string &fallbackDir);

} // namespace mixrt

#endif // MIXRT_TOKENCACHE_H
