//===- FuzzUtil.h - Helpers shared by the fuzz targets ----------*- C++ -*-===//
//
// A scratch directory for targets whose API reads files, removed at exit, and
// a check that stops the run (a finding) when an invariant does not hold.
//
//===----------------------------------------------------------------------===//

#ifndef MIX_FUZZ_FUZZUTIL_H
#define MIX_FUZZ_FUZZUTIL_H

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

namespace mixfuzz {

/// Reports a broken invariant and aborts, which libFuzzer records as a crash
/// with the input that caused it.
[[noreturn]] inline void invariantFailed(const char *what, const char *file,
                                         int line) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what);
  std::abort();
}

#define FUZZ_CHECK(cond)                                                       \
  do {                                                                         \
    if (!(cond))                                                               \
      ::mixfuzz::invariantFailed(#cond, __FILE__, __LINE__);                   \
  } while (false)

/// A directory under $TMPDIR (or /tmp) made on first use and removed with
/// its contents when the process exits normally.
inline const std::string &scratchDir() {
  static const std::string path = [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/mix-fuzz.XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a scratch directory");
    return pattern;
  }();
  static const bool registered = [] {
    std::atexit([] {
      ::nftw(
          scratchDir().c_str(),
          [](const char *p, const struct stat *, int, struct FTW *) {
            return ::remove(p);
          },
          16, FTW_DEPTH | FTW_PHYS);
    });
    return true;
  }();
  (void)registered;
  return path;
}

/// Replaces \p path with the \p size bytes at \p data.
inline void writeFile(const std::string &path, const void *data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0)
    throw std::runtime_error("cannot write " + path);
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + path);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  ::close(fd);
}

} // namespace mixfuzz

#endif // MIX_FUZZ_FUZZUTIL_H
