//===- DataTestUtil.h - Helpers for the data pipeline tests -----*- C++ -*-===//
//
// A scratch directory removed at the end of a test; file writing and the tiny
// GPT-2 vocabularies come from mixrt/testing/TinyGPT2.h, which the fuzz
// targets share.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TEST_DATA_DATATESTUTIL_H
#define MIXRT_TEST_DATA_DATATESTUTIL_H

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mixrt/TokenizerGPT2.h"
#include "mixrt/testing/TinyGPT2.h"

#include <ftw.h>
#include <unistd.h>

namespace mixrt::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class ScratchDir {
public:
  ScratchDir() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/mixrt-data-test.XXXXXX";
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a scratch directory");
    path = pattern;
  }
  ~ScratchDir() {
    ::nftw(
        path.c_str(),
        [](const char *p, const struct stat *, int, struct FTW *) {
          return ::remove(p);
        },
        16, FTW_DEPTH | FTW_PHYS);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  /// The path of \p name inside the directory.
  std::string file(const std::string &name) const { return path + "/" + name; }

  std::string path;
};

/// The Unicode version of the node on PATH (process.versions.unicode), or
/// nothing where there is no node.
inline std::optional<std::string> nodeUnicodeVersion() {
  FILE *pipe = ::popen("node -p process.versions.unicode 2>/dev/null", "r");
  if (!pipe)
    return std::nullopt;
  std::string out;
  char buf[64];
  while (size_t n = std::fread(buf, 1, sizeof(buf), pipe))
    out.append(buf, n);
  if (::pclose(pipe) != 0 || out.empty())
    return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r'))
    out.pop_back();
  return out;
}

/// GPT-2's pre-tokenization of \p text, each piece copied.
inline std::vector<std::string> gpt2Pieces(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view p : gpt2PreTokenize(text))
    out.emplace_back(p);
  return out;
}

using mixrt::testing::gpt2Char;
using mixrt::testing::gpt2Symbol;
using mixrt::testing::jsonString;
using mixrt::testing::writeFile;
using mixrt::testing::writeTinyGPT2;

} // namespace mixrt::test

#endif // MIXRT_TEST_DATA_DATATESTUTIL_H
