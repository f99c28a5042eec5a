//===- TestUtil.h - Helpers shared by the runtime unit tests ----*- C++ -*-===//
//
// Temporary directories, raw file writing, checking that a call fails with
// a given one-line message, and a small valid manifest to mutate.
//
//===----------------------------------------------------------------------===//

#ifndef MIXRT_TEST_TESTUTIL_H
#define MIXRT_TEST_TESTUTIL_H

#include "mixrt/Error.h"
#include "mixrt/Json.h"
#include "mixrt/PackageABI.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace mixrt {
namespace test {

/// A fresh directory under the system temporary directory, removed with
/// everything in it on destruction.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mixrt-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ignored);
    std::filesystem::remove_all(path, ignored);
  }
  /// \p name inside the directory.
  std::string file(const std::string &name) const {
    return (path / name).string();
  }
  /// The names of the entries in the directory.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(path))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::filesystem::path path;
};

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The 8-byte little-endian encoding of \p value.
inline std::string le64(uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(value >> (8 * i));
  return out;
}

/// Succeeds when \p body throws mixrt::Error with a one-line message
/// containing every one of \p parts.
template <typename F>
::testing::AssertionResult failsWith(F &&body,
                                     std::initializer_list<std::string> parts) {
  try {
    body();
  } catch (const Error &e) {
    std::string message = e.what();
    if (message.find('\n') != std::string::npos)
      return ::testing::AssertionFailure()
             << "message is not one line: " << message;
    for (const std::string &part : parts)
      if (message.find(part) == std::string::npos)
        return ::testing::AssertionFailure()
               << "message \"" << message << "\" lacks \"" << part << "\"";
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no mixrt::Error was thrown";
}

/// The member \p key of object \p object, appended as null when absent.
inline json::Value &member(json::Value &object, const std::string &key) {
  for (json::Member &m : object.getObject())
    if (m.key == key)
      return m.value;
  object.getObject().push_back(json::Member{key, json::Value()});
  return object.getObject().back().value;
}

/// Removes the member \p key of \p object.
inline void erase(json::Value &object, const std::string &key) {
  auto &members = object.getObject();
  members.erase(
      std::remove_if(members.begin(), members.end(),
                     [&](const json::Member &m) { return m.key == key; }),
      members.end());
}

/// Gives \p manifest a library, and the AdamW hyperparameters of the
/// compiled update that every manifest with a library records.
inline void setLibrary(json::Value &manifest, const std::string &library) {
  member(manifest, "library") = json::Value(library);
  member(manifest, "adamw") =
      json::parse(R"({"beta1": 0.9, "beta2": 0.95, "epsilon": 1e-08,
                      "weight_decay": 0.1, "max_grad_norm": 1.0})");
}

/// A valid manifest (docs/package.md) of a tiny model: vocab 16, batch 2,
/// seq 3, and one parameter of each initialiser.
inline json::Value sampleManifest() {
  return json::parse(R"({
    "format": "mixpkg",
    "format_version": )" + std::to_string(MIX_PACKAGE_FORMAT_VERSION) + R"(,
    "compiler": "mixc 0.1.0",
    "target": "cpu",
    "batch": 2,
    "seq": 3,
    "spec": {"arch": "dense", "vocab_size": 16, "n_layer": 1,
             "init": {"seed": 7, "std": 0.02}},
    "params": [
      {"name": "wte.weight", "shape": [16, 4], "init": "normal",
       "std": 0.02, "decay": true},
      {"name": "h.0.mlp.kernels", "shape": [2, 8, 4], "init": "uniform",
       "bound": 0.5, "decay": true},
      {"name": "h.0.ln_1.bias", "shape": [4], "init": "zeros", "decay": false},
      {"name": "h.0.ln_1.weight", "shape": [4], "init": "ones",
       "decay": false},
      {"name": "h.0.altup.predict", "shape": [3, 3], "init": "identity",
       "decay": true}
    ]
  })");
}

} // namespace test
} // namespace mixrt

#endif // MIXRT_TEST_TESTUTIL_H
