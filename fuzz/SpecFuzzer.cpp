//===- SpecFuzzer.cpp - Fuzzes the model spec parser ----------------------===//
//
// Feeds arbitrary bytes to parseModelSpec (lib/Frontend/ModelSpec.cpp), the
// first thing mixc does with its input. A rejected spec must be an llvm::Error;
// an accepted one must print (toJSON) to a spec that parses to the same spec,
// and its parameters must fit the parser's size limit.
//
//===----------------------------------------------------------------------===//

#include "FuzzUtil.h"

#include "mix/Frontend/ModelSpec.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

using namespace mlir::mix;

/// The bytes of all parameters, in double so that it cannot overflow.
static double paramBytes(const std::vector<ParamInfo> &table) {
  double bytes = 0;
  for (const ParamInfo &p : table) {
    double elements = 1;
    for (int64_t dim : p.shape) {
      FUZZ_CHECK(dim >= 1);
      elements *= static_cast<double>(dim);
    }
    bytes += 4 * elements;
  }
  return bytes;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<ModelSpec> spec = parseModelSpec(text, "fuzz.json");
  if (!spec) {
    std::string message = llvm::toString(spec.takeError());
    FUZZ_CHECK(llvm::StringRef(message).starts_with("fuzz.json:"));
    return 0;
  }

  // The printed spec is a spec, and the same one.
  std::string printed;
  llvm::raw_string_ostream os(printed);
  os << spec->toJSON();
  llvm::Expected<ModelSpec> again = parseModelSpec(printed, "printed.json");
  if (!again) {
    llvm::errs() << llvm::toString(again.takeError()) << "\n";
    FUZZ_CHECK(false && "the printed spec does not parse");
  }
  FUZZ_CHECK(again->toJSON() == spec->toJSON());

  // The table of a model with many layers is large (about a dozen entries a
  // layer): build it only for small ones, as the parser's limit is on bytes.
  if (spec->nLayer <= 64) {
    std::vector<ParamInfo> table = paramTable(*spec);
    FUZZ_CHECK(!table.empty());
    FUZZ_CHECK(paramBytes(table) <= double(int64_t{64} << 30));
  }

  if (llvm::Error e = checkShapes(*spec, 1, 1))
    llvm::consumeError(std::move(e));
  if (llvm::Error e = checkShapes(*spec, 3, spec->nPositions))
    llvm::consumeError(std::move(e));
  return 0;
}
