//===- TokenCache.cpp - Text tokenized once into binaries -----------------===//
//
// Writes a text corpus's tokens as binaries with a tokens.json that records
// what they were made from, finds such binaries when they are still
// current, and keeps them next to the data, made once under a lock.
//
//===----------------------------------------------------------------------===//

#include "mixrt/TokenCache.h"

#include "mixrt/Environment.h"
#include "mixrt/Error.h"
#include "mixrt/File.h"
#include "mixrt/Init.h"
#include "mixrt/Json.h"
#include "mixrt/Progress.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace mixrt;
namespace fs = std::filesystem;

namespace {

/// Binaries of this layout and meaning; a cache of another is remade.
constexpr int kFormat = 1;

/// Where a source file stands now: its size, its inode, and the times of
/// its last change of contents (which a copy may preserve) and of its
/// inode (which no user can set: any write or copy over it moves it).
json::Value describeFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    fail(path, ": cannot stat: ", std::strerror(errno));
  auto ns = [](const struct timespec &t) {
    return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
  };
  return json::Value::Object{{"size", int64_t(st.st_size)},
                             {"inode", int64_t(st.st_ino)},
                             {"mtime_ns", ns(st.st_mtim)},
                             {"ctime_ns", ns(st.st_ctim)}};
}

/// What the tokens of \p part are made from.
json::Value describePart(const TextPart &part, const std::string &root) {
  json::Value::Array files;
  for (const TextRange &r : part.ranges) {
    json::Value file = describeFile(r.path);
    json::Value::Object entry{
        {"path", fs::path(r.path).lexically_relative(root).generic_string()},
        {"begin", int64_t(r.begin)},
        {"end", int64_t(r.end)}};
    for (json::Member &m : file.getObject())
      entry.push_back(m);
    files.push_back(std::move(entry));
  }
  return files;
}

/// The directory the paths of --data DATA are recorded relative to.
std::string getDataRoot(const std::string &data) {
  std::error_code ec;
  if (fs::is_directory(data, ec))
    return data;
  fs::path parent = fs::path(data).parent_path();
  return parent.empty() ? "." : parent.string();
}

/// Everything the binaries of \p corpus depend on, as tokens.json's
/// "source" records it.
json::Value describeSource(const std::string &data, const TextCorpus &corpus,
                           const Tokenizer &tokenizer) {
  std::string root = getDataRoot(data);
  return json::Value::Object{{"format", kFormat},
                             {"tokenizer", tokenizer.getIdentity()},
                             {"train", describePart(corpus.train, root)},
                             {"val", describePart(corpus.val, root)}};
}

int tokenWidth(const Tokenizer &tokenizer) {
  return tokenizer.getVocabSize() <= 65536 ? 2 : 4;
}

/// Writes the tokens of \p part to \p path, \p width bytes each,
/// little-endian; returns how many.
uint64_t writePart(const TextPart &part, const Tokenizer &tokenizer,
                   const std::string &path, int width, Progress *progress) {
  AtomicFileWriter out(path);
  uint64_t count = 0;
  std::string bytes;
  tokenizeText(
      part, tokenizer,
      [&](const std::vector<TokenId> &ids) {
        bytes.resize(ids.size() * size_t(width));
        char *at = bytes.data();
        for (TokenId id : ids) {
          uint32_t v = uint32_t(id);
          for (int b = 0; b < width; ++b)
            *at++ = char((v >> (8 * b)) & 0xFF);
        }
        out.write(bytes);
        count += ids.size();
      },
      progress);
  out.commit();
  return count;
}

uint64_t fileSize(const std::string &path) {
  std::error_code ec;
  uint64_t size = fs::file_size(path, ec);
  return ec ? UINT64_MAX : size;
}

} // namespace

TokenBinaries mixrt::writeTokenBinaries(const std::string &data,
                                        const TextCorpus &corpus,
                                        const Tokenizer &tokenizer,
                                        const std::string &dir,
                                        bool showProgress) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    fail(dir, ": cannot create the directory: ", ec.message());
  // The sources' state before reading them: a file changed while it is
  // tokenized then makes the cache stale, not wrong.
  json::Value source = describeSource(data, corpus, tokenizer);
  // Stale binaries are unnamed before they are replaced, so that no moment
  // shows new tokens under an old description.
  fs::remove(dir + "/tokens.json", ec);
  TokenBinaries bins;
  bins.dir = dir;
  bins.width = tokenWidth(tokenizer);
  std::optional<Progress> progress;
  if (showProgress)
    progress.emplace("tokenizing",
                     corpus.train.getBytes() + corpus.val.getBytes());
  Progress *p = progress ? &*progress : nullptr;
  bins.trainTokens =
      writePart(corpus.train, tokenizer, dir + "/train.bin", bins.width, p);
  bins.valTokens =
      writePart(corpus.val, tokenizer, dir + "/val.bin", bins.width, p);
  if (progress)
    progress->finish();
  json::Value meta =
      json::Value::Object{{"dtype", bins.width == 2 ? "uint16" : "uint32"},
                          {"vocab_size", tokenizer.getVocabSize()},
                          {"train_tokens", int64_t(bins.trainTokens)},
                          {"val_tokens", int64_t(bins.valTokens)},
                          {"source", std::move(source)}};
  AtomicFileWriter out(dir + "/tokens.json");
  out.write(json::write(meta) + "\n");
  out.commit();
  return bins;
}

std::optional<TokenBinaries>
mixrt::findTokenBinaries(const std::string &dir, const std::string &data,
                         const TextCorpus &corpus, const Tokenizer &tokenizer) {
  json::Value meta;
  try {
    std::error_code ec;
    if (!fs::exists(dir + "/tokens.json", ec))
      return std::nullopt;
    meta = json::parse(readFile(dir + "/tokens.json"));
  } catch (const Error &) {
    return std::nullopt; // unreadable: made again
  }
  if (!meta.isObject())
    return std::nullopt;
  const json::Value *source = meta.find("source");
  const json::Value *train = meta.find("train_tokens");
  const json::Value *val = meta.find("val_tokens");
  const json::Value *dtype = meta.find("dtype");
  if (!source || !train || !val || !dtype || !train->isInteger() ||
      !val->isInteger() || !dtype->isString() || train->getInteger() < 0 ||
      val->getInteger() < 0 || train->getInteger() > (INT64_C(1) << 56) ||
      val->getInteger() > (INT64_C(1) << 56))
    return std::nullopt;
  if (json::write(*source) !=
      json::write(describeSource(data, corpus, tokenizer)))
    return std::nullopt;
  TokenBinaries bins;
  bins.dir = dir;
  bins.width = dtype->getString() == "uint32" ? 4 : 2;
  if (bins.width != tokenWidth(tokenizer))
    return std::nullopt;
  bins.trainTokens = uint64_t(train->getInteger());
  bins.valTokens = uint64_t(val->getInteger());
  if (fileSize(dir + "/train.bin") != bins.trainTokens * uint64_t(bins.width) ||
      fileSize(dir + "/val.bin") != bins.valTokens * uint64_t(bins.width))
    return std::nullopt;
  return bins;
}

/// The name of \p tokenizer's cache directory: its name, and where its
/// identity says more (a vocabulary's hash), a hash of that, so that two
/// vocabularies keep a cache each.
static std::string getCacheName(const Tokenizer &tokenizer) {
  std::string identity = tokenizer.getIdentity();
  if (identity == tokenizer.getName())
    return identity;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a64(identity)));
  return concat(tokenizer.getName(), "-", hash);
}

std::string mixrt::getTokenCacheDir(const std::string &data,
                                    const Tokenizer &tokenizer) {
  std::error_code ec;
  if (fs::is_directory(data, ec))
    return data + "/.mix-tokens/" + getCacheName(tokenizer);
  fs::path file(data);
  fs::path parent = file.parent_path();
  std::string name = "." + file.filename().string() + ".mix-tokens";
  return ((parent.empty() ? fs::path(".") : parent) / name).string() + "/" +
         getCacheName(tokenizer);
}

/// Waits for the lock \p lock on the cache \p dir of \p data, saying
/// once whom it waits for.
static void waitForLock(FileLock &lock, const std::string &data,
                        const std::string &dir) {
  bool waited = false;
  while (!lock.tryLock()) {
    if (!waited)
      std::fprintf(stderr,
                   "waiting for process %s, which is tokenizing %s into "
                   "%s\n",
                   lock.getHolder().c_str(), data.c_str(), dir.c_str());
    waited = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

/// Makes (or finds, made meanwhile by another process) the binaries in
/// \p dir; nothing, with a note, when \p dir cannot take them.
static std::optional<TokenBinaries> makeCache(const std::string &data,
                                              const std::string &dir,
                                              const TextCorpus &corpus,
                                              const Tokenizer &tokenizer) {
  if (auto bins = findTokenBinaries(dir, data, corpus, tokenizer))
    return bins;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || ::access(dir.c_str(), W_OK) != 0)
    return std::nullopt;
  try {
    FileLock lock(dir + "/lock");
    waitForLock(lock, data, dir);
    if (auto bins = findTokenBinaries(dir, data, corpus, tokenizer))
      return bins;
    // What a process killed while it wrote them left (the lock says no
    // process writes them now).
    for (const char *file : {"train.bin", "val.bin", "tokens.json"})
      removeTemporaryFiles(dir + "/" + file);
    uint64_t bytes = corpus.train.getBytes() + corpus.val.getBytes();
    std::fprintf(stderr,
                 "tokenizing %s (%.1f MB, %s tokenizer) into %s, once: later "
                 "runs reuse it while the text is unchanged\n",
                 data.c_str(), double(bytes) / 1e6, tokenizer.getName(),
                 dir.c_str());
    return writeTokenBinaries(data, corpus, tokenizer, dir,
                              bytes >= kTokenProgressMinBytes);
  } catch (const CorpusError &) {
    throw; // the text's own problem: no other place would take it
  } catch (const Error &e) {
    // The lock or the writing failed (no flock, a full disk, ...).
    std::fprintf(stderr, "note: %s\n", e.what());
    return std::nullopt;
  }
}

/// MIXRT_TOKEN_CACHE.
static std::optional<bool> readCacheSwitch() {
  return readSwitch("MIXRT_TOKEN_CACHE", "cache the tokens of any text corpus",
                    "of none: tokenize the text in memory on every run");
}

std::optional<TokenBinaries> mixrt::findTokenCache(const std::string &data,
                                                   const TextCorpus &corpus,
                                                   const Tokenizer &tokenizer) {
  if (!readCacheSwitch().value_or(true))
    return std::nullopt;
  return findTokenBinaries(getTokenCacheDir(data, tokenizer), data, corpus,
                           tokenizer);
}

std::optional<TokenBinaries>
mixrt::getTokenCache(const std::string &data, const TextCorpus &corpus,
                     const Tokenizer &tokenizer,
                     const std::string &fallbackDir) {
  std::optional<bool> wanted = readCacheSwitch();
  uint64_t bytes = corpus.train.getBytes() + corpus.val.getBytes();
  if (!wanted.value_or(bytes >= kTokenCacheMinBytes))
    return std::nullopt;
  std::string dir = getTokenCacheDir(data, tokenizer);
  if (auto bins = makeCache(data, dir, corpus, tokenizer))
    return bins;
  if (!fallbackDir.empty()) {
    std::string fallback = fallbackDir + "/" + tokenizer.getName();
    if (auto bins = makeCache(data, fallback, corpus, tokenizer))
      return bins;
  }
  std::fprintf(stderr,
               "note: cannot write the token cache %s%s; the text is "
               "tokenized in memory on every run\n",
               dir.c_str(),
               fallbackDir.empty() ? "" : " nor one in the run directory");
  return std::nullopt;
}
