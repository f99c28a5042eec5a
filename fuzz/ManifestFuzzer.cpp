//===- ManifestFuzzer.cpp - Fuzzes the package loader's manifest ----------===//
//
// Writes arbitrary bytes as a package's manifest.json and loads the package
// with readManifest, as every mix-run command starts. A rejected manifest
// must be a mixrt::Error naming the manifest; an accepted one must hold a
// consistent parameter table, and a small one must initialise (initParams)
// to parameters that pass mix-run's own parameter check.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "mixrt/Error.h"
#include "mixrt/Init.h"
#include "mixrt/Inputs.h"
#include "mixrt/Manifest.h"
#include "mixrt/Safetensors.h"

#include <cstdint>
#include <string>
#include <sys/stat.h>
#include <unordered_set>

using namespace mixrt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string package = [] {
    std::string dir = mixfuzz::scratchDir() + "/fuzz.mixpkg";
    ::mkdir(dir.c_str(), 0700);
    return dir;
  }();
  mixfuzz::writeFile(package + "/manifest.json", data, size);

  Manifest manifest;
  try {
    manifest = readManifest(package);
  } catch (const Error &e) {
    FUZZ_CHECK(std::string(e.what()).find(package) == 0);
    return 0;
  }

  FUZZ_CHECK(manifest.batch >= 1 && manifest.seq >= 1 &&
             manifest.vocabSize >= 1);
  std::unordered_set<std::string> names;
  double total = 0;
  for (const ParamInfo &p : manifest.params) {
    FUZZ_CHECK(!p.name.empty() && names.insert(p.name).second);
    int64_t count = getNumElements(p.shape);
    FUZZ_CHECK(count >= 1);
    total += static_cast<double>(count);
  }
  if (manifest.library)
    FUZZ_CHECK(!manifest.library->empty());
  if (manifest.libraryChecksum)
    FUZZ_CHECK(manifest.library && manifest.libraryChecksum->size() == 16);

  // Initialise small packages; the values may overflow float32 (a huge std),
  // which the parameter check must then refuse, and nothing else.
  if (total > (1 << 16))
    return 0;
  TensorFile params = initParams(manifest);
  try {
    checkParams(manifest, params, "init");
  } catch (const Error &e) {
    FUZZ_CHECK(std::string(e.what()).find("finite") != std::string::npos);
  }
  return 0;
}
