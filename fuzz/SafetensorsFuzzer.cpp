//===- SafetensorsFuzzer.cpp - Fuzzes the safetensors reader --------------===//
//
// Writes arbitrary bytes to a file and reads it with readSafetensors, as
// mix-run reads parameters, checkpoints and batches. A rejected file must be
// a mixrt::Error; an accepted one must write back and read again to the same
// tensors, and go through the checks mix-run applies to parameters and
// batches (checkParams, checkBatch) against a small manifest.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "mixrt/Error.h"
#include "mixrt/Inputs.h"
#include "mixrt/Manifest.h"
#include "mixrt/PackageABI.h"
#include "mixrt/Safetensors.h"

#include <cstdint>
#include <string>

using namespace mixrt;

#define MIX_STRINGIFY_(X) #X
#define MIX_STRINGIFY(X) MIX_STRINGIFY_(X)

/// A package of two parameters and batches of 2 x 3 ids below 8, in the
/// format this runtime reads.
static const char *const kManifest = R"({
  "format": "mixpkg", "format_version": )" MIX_STRINGIFY(
    MIX_PACKAGE_FORMAT_VERSION) R"(, "target": "cpu",
  "batch": 2, "seq": 3,
  "spec": {"vocab_size": 8, "init": {"seed": 1, "std": 0.02}},
  "params": [
    {"name": "wte.weight", "shape": [8, 4], "init": "normal", "std": 0.02,
     "decay": true},
    {"name": "ln.bias", "shape": [4], "init": "zeros", "decay": false}
  ]
})";

/// The metadata less a checksum entry, which a file written back without
/// one does not have.
static std::vector<std::pair<std::string, std::string>>
metadataOf(const TensorFile &file) {
  std::vector<std::pair<std::string, std::string>> metadata;
  for (const auto &entry : file.metadata)
    if (entry.first != "checksum_fnv1a64")
      metadata.push_back(entry);
  return metadata;
}

static bool sameFile(const TensorFile &a, const TensorFile &b) {
  if (metadataOf(a) != metadataOf(b) ||
      a.getTensors().size() != b.getTensors().size())
    return false;
  for (size_t i = 0; i < a.getTensors().size(); ++i) {
    const NamedTensor &x = a.getTensors()[i], &y = b.getTensors()[i];
    if (x.name != y.name || x.tensor.dtype != y.tensor.dtype ||
        x.tensor.shape != y.tensor.shape || x.tensor.data != y.tensor.data)
      return false;
  }
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Manifest manifest = parseManifest(kManifest, "fuzz.json");
  static const std::string in = mixfuzz::scratchDir() + "/in.safetensors";
  static const std::string out = mixfuzz::scratchDir() + "/out.safetensors";
  mixfuzz::writeFile(in, data, size);

  TensorFile file;
  try {
    file = readSafetensors(in);
  } catch (const Error &) {
    return 0;
  }

  for (const NamedTensor &named : file.getTensors()) {
    const Tensor &t = named.tensor;
    FUZZ_CHECK(static_cast<uint64_t>(t.getNumElements()) *
                   getDTypeSize(t.dtype) ==
               t.data.size());
  }

  // What was read writes back, and reads again to the same tensors.
  writeSafetensors(out, file);
  FUZZ_CHECK(sameFile(file, readSafetensors(out)));

  // mix-run's checks of parameters and batches reject or accept it cleanly.
  try {
    std::vector<const Tensor *> params = checkParams(manifest, file, in);
    FUZZ_CHECK(params.size() == manifest.params.size());
  } catch (const Error &) {
  }
  try {
    TokenBatch batch = checkBatch(manifest, file, in);
    FUZZ_CHECK(batch.tokens.size() == 6 && batch.targets.size() == 6);
    for (int64_t id : batch.tokens)
      FUZZ_CHECK(id >= 0 && id < 8);
    for (int64_t id : batch.targets)
      FUZZ_CHECK(id >= 0 && id < 8);
  } catch (const Error &) {
  }
  return 0;
}
